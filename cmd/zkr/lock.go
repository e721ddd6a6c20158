package main

import (
	"context"
	"flag"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/mutex"
	"github.com/zkrecipes/zkrecipes/recipes/rwlock"
	"github.com/zkrecipes/zkrecipes/recipes/semaphore"
)

// lock, rlock, wlock and semaphore differ only in what they acquire. Everything
// else, connecting, waiting with progress, holding while the child runs and
// releasing, is the session's (session.go), which elect shares.

const lockFlagsHelp = `
While it waits, zkr shows on stderr who holds PATH and for how long, and how
many wait ahead (--quiet turns it off). Once it holds, it runs CMD with stdin,
stdout and stderr passed through, and these in its environment:
  ZKR_LOCK_PATH       PATH
  ZKR_LOCK_NODE       our node's path
  ZKR_FENCING_TOKEN   a number that grows with every holder: pass it to a store
                      that can refuse a writer older than one it has seen
Signals sent to zkr (INT, TERM, HUP, USR1, USR2) are passed on to CMD. When CMD
exits, the hold is released and zkr exits with CMD's code. Without CMD, zkr
prints our node on stdout and holds until SIGINT, SIGTERM or SIGHUP.

If the hold may be lost while CMD runs (ZooKeeper expired our session, the
connection dropped, after which ZooKeeper may give the lock to another, or another
client deleted our node), CMD gets
SIGTERM, SIGKILL after --grace, and zkr exits 76. When CMD exits, zkr asks
ZooKeeper whether the hold outlived it (zkr may have been paused meanwhile, with
CMD) and exits 76 if not.

CMD runs in a process group of its own, and signals go to the whole group.
A guard process (zkr-guard in ps) kills that group when zkr ends, however it
ends (kill -9 included), and when CMD exits: nothing CMD started works on
without the lock (except what leaves the group, as setsid does). On zkr's
terminal, CMD's group has the terminal: Ctrl-C reaches CMD, and Ctrl-Z stops
CMD and zkr together as one job (fg and bg continue both).
`

var (
	lockCmd = lockCommand("lock",
		"hold an exclusive lock while CMD runs (Curator's InterProcessMutex)",
		"Waits for the exclusive lock at PATH, a fair mutex whose nodes are Curator's\nInterProcessMutex's (PATH/_c_<uuid>-lock-<seq>), and holds it while CMD runs.",
		"  zkr --servers zk1:2181,zk2:2181 lock /cron/backup --timeout 1m -- /usr/local/bin/backup.sh")
	rlockCmd = lockCommand("rlock",
		"hold a read lock (shared with readers, not with a writer) while CMD runs",
		"Waits for the read side of the read/write lock at PATH (Curator's\nInterProcessReadWriteLock) and holds it while CMD runs. Readers share it; a writer\nthat queued before us goes first.",
		"  zkr rlock /data/catalog -- ./export-catalog.sh")
	wlockCmd = lockCommand("wlock",
		"hold the write lock (alone) of a read/write lock while CMD runs",
		"Waits for the write side of the read/write lock at PATH (Curator's\nInterProcessReadWriteLock) and holds it, alone, while CMD runs.",
		"  zkr wlock /data/catalog --timeout 10m -- ./rebuild-catalog.sh")
	semaphoreCmd = lockCommand("semaphore",
		"hold one of N leases while CMD runs (Curator's InterProcessSemaphoreV2)",
		"Waits for one of the --leases leases of the counting semaphore at PATH\n(Curator's InterProcessSemaphoreV2: PATH/leases, PATH/locks) and holds it while\nCMD runs: at most N commands run at once across all hosts.",
		"  zkr semaphore /jobs/render --leases 4 -- ./render.sh frame-0042")
)

type lockOptions struct {
	kind         string
	id           string
	timeout      time.Duration
	grace        time.Duration
	leases       int
	curatorNames bool
}

func lockCommand(name, summary, help, example string) *command {
	synopsis := name + " PATH [flags] [-- CMD ARGS...]"
	if name == "semaphore" {
		synopsis = name + " PATH --leases N [flags] [-- CMD ARGS...]"
	}
	return &command{
		name: name, synopsis: synopsis, summary: summary, help: help + "\n" + lockFlagsHelp,
		example: example,
		flags: func(fs *flag.FlagSet) func(*env, []string, []string, bool) int {
			o := &lockOptions{kind: name}
			idFlag(fs, &o.id)
			fs.DurationVar(&o.timeout, "timeout", 0, "give up waiting after this `duration`, with exit code 75 (default: wait forever)")
			graceFlag(fs, &o.grace)
			switch name {
			case "semaphore":
				fs.IntVar(&o.leases, "leases", 0, "the semaphore's number of leases, `N` ≥ 1 (required; every participant must give the same)")
			case "rlock", "wlock":
				fs.BoolVar(&o.curatorNames, "curator-names", false, "name our node __READ__/__WRIT__ as Curator does, to share the lock with Java processes (default read-/write-)")
			}
			return o.run
		},
	}
}

func idFlag(fs *flag.FlagSet, id *string) {
	fs.StringVar(id, "id", "", "participant `ID`, stored in our node and shown by inspect and in progress lines (default host:pid)")
}

func graceFlag(fs *flag.FlagSet, grace *time.Duration) {
	fs.DurationVar(grace, "grace", 5*time.Second, "when the hold is lost, how long CMD has between SIGTERM and SIGKILL (default 5s)")
}

func (o *lockOptions) run(e *env, pos, argv []string, dash bool) int {
	path, err := pathArg(pos, argv, dash, false)
	switch {
	case err != nil:
		return e.fail(err)
	case o.kind == "semaphore" && o.leases < 1:
		return e.fail(usageError("--leases must be at least 1, not %d", o.leases))
	case o.timeout < 0 || o.grace < 0:
		return e.fail(usageError("--timeout and --grace cannot be negative"))
	}
	id := participantID(o.id)

	s, code := e.start()
	if s == nil {
		return code
	}
	defer s.close()
	acquire, err := o.acquirer(s.client, path, id)
	if err != nil {
		return s.fail(usageError("%v", err))
	}
	h, code := s.await(waitFor{path: path, what: o.what() + " on " + path}, o.timeout, acquire)
	if h == nil {
		return code
	}
	code, _ = s.hold(h, argv, o.grace)
	return code
}

func (o *lockOptions) what() string {
	switch o.kind {
	case "rlock":
		return "the read lock"
	case "wlock":
		return "the write lock"
	case "semaphore":
		return "a lease"
	}
	return "the lock"
}

// acquirer makes the recipe's participant and returns how to take it.
func (o *lockOptions) acquirer(c *framework.Client, path, id string) (func(context.Context) (*held, error), error) {
	switch o.kind {
	case "lock":
		m, err := mutex.New(c, path, mutex.WithID(id))
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) (*held, error) {
			if err := m.Acquire(ctx); err != nil {
				return nil, err
			}
			return &held{path: path, node: m.Node(), token: m.FencingToken(), lost: m.Lost(), release: m.Release}, nil
		}, nil
	case "rlock", "wlock":
		opts := []rwlock.Option{rwlock.WithID(id)}
		if o.curatorNames {
			opts = append(opts, rwlock.WithCuratorNames())
		}
		rw, err := rwlock.New(c, path, opts...)
		if err != nil {
			return nil, err
		}
		l := rw.WriteLock()
		if o.kind == "rlock" {
			l = rw.ReadLock()
		}
		return func(ctx context.Context) (*held, error) {
			if err := l.Acquire(ctx); err != nil {
				return nil, err
			}
			return &held{path: path, node: l.Node(), token: l.FencingToken(), lost: l.Lost(), release: l.Release}, nil
		}, nil
	default: // semaphore
		sem, err := semaphore.New(c, path, o.leases, semaphore.WithID(id))
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) (*held, error) {
			leases, err := sem.Acquire(ctx, 1)
			if err != nil {
				return nil, err
			}
			l := leases[0]
			return &held{path: path, node: l.Node(), token: l.FencingToken(), lost: l.Lost(), release: l.Release}, nil
		}, nil
	}
}

// pathArg checks the positional arguments: exactly one PATH, valid for a lock, and
// a command after "--" if there is a "--" (or if needCmd).
func pathArg(pos, argv []string, dash, needCmd bool) (string, error) {
	switch {
	case len(pos) == 0:
		return "", usageError("missing PATH")
	case len(pos) > 1:
		return "", usageError("unexpected argument %q after PATH (put the command after --)", pos[1])
	case (dash || needCmd) && len(argv) == 0:
		return "", usageError("missing CMD after --")
	}
	p := pos[0]
	if err := framework.ValidatePath(p); err != nil {
		reason := strings.TrimPrefix(err.Error(), framework.ErrInvalidPath.Error()+" ")
		return "", usageError("invalid PATH %s", reason)
	}
	if p == "/" {
		return "", usageError(`invalid PATH "/": the root cannot be a lock`)
	}
	return p, nil
}

// participantID is --id, or host:pid as the recipes' default, which progress lines
// need to know to find our own node.
func participantID(id string) string {
	if id != "" {
		return id
	}
	host, _ := os.Hostname()
	return host + ":" + strconv.Itoa(os.Getpid())
}
