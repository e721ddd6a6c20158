package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/mutex"
	"github.com/zkrecipes/zkrecipes/recipes/rwlock"
	"github.com/zkrecipes/zkrecipes/recipes/semaphore"
)

// lock, rlock, wlock and semaphore differ only in what they acquire. Everything
// else, connecting, waiting with progress, holding while the child runs and
// releasing, is the session's below, which elect shares.

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

If the hold may be lost while CMD runs (ZooKeeper expired our session, or the
connection dropped, after which ZooKeeper may give the lock to another), CMD gets
SIGTERM, SIGKILL after --grace, and zkr exits 76. When CMD exits, zkr asks
ZooKeeper whether the hold outlived it (zkr may have been paused meanwhile, with
CMD) and exits 76 if not. When stdin is not a terminal
(cron, scripts), CMD runs in a process group of its own and signals go to the
whole group, so that nothing a shell started keeps working without the lock.
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

// held is what a command holds: a lock, a lease, a term of leadership.
type held struct {
	what       string // "the lock on /p", for messages
	path, node string
	token      int64
	lost       <-chan struct{}
	release    func(context.Context) error // nil when there is nothing to release
}

// releaseTimeout bounds a release; past it, closing the client ends the session,
// which deletes our ephemeral node anyway.
const releaseTimeout = 5 * time.Second

// forwarded are the signals zkr catches: passed on to the child while it runs, and
// while zkr waits the first three end the wait.
var forwarded = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2}

func terminating(sig os.Signal) bool {
	return sig == syscall.SIGINT || sig == syscall.SIGTERM || sig == syscall.SIGHUP
}

// session is one run's ZooKeeper client and signals.
type session struct {
	*env
	client *framework.Client
	sigs   chan os.Signal
}

// start catches signals and connects. On failure it has reported why, and returns
// the exit code.
func (e *env) start() (*session, int) {
	s := &session{env: e, sigs: make(chan os.Signal, 8)}
	signal.Notify(s.sigs, forwarded...)
	ctx, stop := s.interruptible(context.Background())
	c, err := e.connect(ctx)
	if sig := stop(); sig != 0 {
		if c != nil {
			_ = c.Close()
		}
		signal.Stop(s.sigs)
		return nil, exitSignal + int(sig)
	}
	if err != nil {
		signal.Stop(s.sigs)
		return nil, e.fail(err)
	}
	s.client = c
	return s, 0
}

func (s *session) close() {
	_ = s.client.Close()
	signal.Stop(s.sigs)
}

// connect makes the client and waits, at most --connect-timeout, for a session.
func (e *env) connect(ctx context.Context) (*framework.Client, error) {
	var servers []string
	for _, srv := range strings.Split(e.servers, ",") {
		if srv = strings.TrimSpace(srv); srv != "" {
			servers = append(servers, srv)
		}
	}
	if len(servers) == 0 {
		return nil, usageError("no ZooKeeper servers: set --servers or ZK_SERVERS")
	}
	opts := []framework.Option{
		framework.WithSessionTimeout(e.sessionTimeout),
		framework.WithConnectionTimeout(e.connectTimeout),
		framework.WithLogger(e.log),
	}
	if e.namespace != "" {
		opts = append(opts, framework.WithNamespace(e.namespace))
	}
	if e.auth != "" {
		scheme, cred, ok := strings.Cut(e.auth, ":")
		if !ok || scheme == "" || cred == "" {
			return nil, usageError("--auth wants scheme:credentials") // the value is a secret: not echoed
		}
		opts = append(opts, framework.WithAuth(scheme, []byte(cred)))
	}
	if cfg, err := e.tls.config(); err != nil {
		return nil, usageError("%v", err)
	} else if cfg != nil {
		opts = append(opts, framework.WithTLS(cfg))
	}
	c, err := framework.New(servers, opts...)
	if err != nil {
		// "framework: invalid option: framework: invalid namespace ..." says it twice.
		msg := strings.TrimPrefix(err.Error(), framework.ErrInvalidOption.Error()+": ")
		return nil, usageError("%s", strings.TrimPrefix(msg, "framework: "))
	}
	wctx, cancel := context.WithTimeout(ctx, e.connectTimeout)
	defer cancel()
	if err := c.WaitConnected(wctx); err != nil {
		_ = c.Close()
		// Why the last attempt failed (refused, an untrusted certificate, ...) is the
		// part of the client's error worth a user's reading.
		why := ""
		if ce := (*framework.ConnectError)(nil); errors.As(err, &ce) && ce.Last != nil {
			why = " (last attempt: " + ce.Last.Error() + ")"
		}
		return nil, zkError("cannot connect to ZooKeeper at %s within %v%s", e.servers, e.connectTimeout, why)
	}
	e.log.Debug("zkr: connected", "session", fmt.Sprintf("%#x", c.SessionID()))
	return c, nil
}

// interruptible returns a context that ends on SIGINT, SIGTERM or SIGHUP, for the
// phases in which zkr waits and no child runs. stop ends the watch and returns the
// signal that ended ctx, or 0. Other signals are dropped meanwhile: there is no
// child to pass them to.
func (s *session) interruptible(parent context.Context) (ctx context.Context, stop func() syscall.Signal) {
	ctx, cancel := context.WithCancel(parent)
	var got syscall.Signal
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case sig := <-s.sigs:
				if terminating(sig) {
					got = sig.(syscall.Signal)
					cancel()
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return ctx, func() syscall.Signal {
		cancel()
		<-done
		return got
	}
}

// waitFor says what a session waits for, for progress lines and messages.
type waitFor struct {
	path string // the recipe's path, as given
	what string // "the lock on /p", "leadership of /p"
}

func (w waitFor) String() string { return w.what }

// await waits for acquire, showing progress, until it holds, the timeout runs out
// (exit 75) or a terminating signal comes (128+N). If it returns no hold, it has
// reported why and returns the exit code.
func (s *session) await(w waitFor, timeout time.Duration, acquire func(context.Context) (*held, error)) (*held, int) {
	ictx, stop := s.interruptible(context.Background())
	ctx := ictx
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ictx, timeout)
		defer cancel()
	}
	stopProgress := s.progress(ctx, w)
	h, err := acquire(ctx)
	stopProgress()
	sig := stop()
	switch {
	case sig != 0:
		// A signal that raced with the grant still means: do not go on.
		if h != nil {
			s.release(h)
		}
		s.notice("%v while waiting for %v", sig, w)
		return nil, exitSignal + int(sig)
	case err == nil:
		h.what = w.what
		s.log.Debug("zkr: acquired", "node", h.node, "fencing_token", h.token)
		return h, exitOK
	case timeout > 0 && errors.Is(err, context.DeadlineExceeded):
		return nil, s.fail(&exitError{exitTimeout, fmt.Sprintf("timed out after %v waiting for %v", timeout, w)})
	default:
		return nil, s.fail(zkError("waiting for %v: %v", w, err))
	}
}

// hold runs argv while h is held; without argv, it holds until SIGINT, SIGTERM or
// SIGHUP. Then it releases h. If h is lost first, the child is stopped (SIGTERM,
// SIGKILL after grace) and hold returns exitLost and lost = true; otherwise the
// child's code.
func (s *session) hold(h *held, argv []string, grace time.Duration) (code int, lost bool) {
	defer s.release(h)
	select {
	case <-h.lost:
		s.errorf("lost %s before running anything (node %s)", h.what, h.node)
		return exitLost, true
	default:
	}
	if len(argv) == 0 {
		fmt.Fprintln(s.stdout, h.node)
		s.notice("holding %s (node %s, fencing token %d) until SIGINT or SIGTERM", h.what, h.node, h.token)
		for {
			select {
			case <-h.lost:
				s.errorf("lost %s (node %s)", h.what, h.node)
				return exitLost, true
			case sig := <-s.sigs:
				if terminating(sig) {
					s.log.Debug("zkr: releasing", "signal", sig)
					return exitOK, false
				}
			}
		}
	}
	c, err := startChild(argv, childEnv(h), s.stdout, s.stderr)
	if err != nil {
		return s.fail(err), false
	}
	for {
		select {
		case <-c.done:
			// The child may have run on while zkr was paused (SIGSTOP, a VM pause)
			// past its session: a lost hold whose Lost zkr has not yet heard of. Its
			// work is reported only if the hold outlived it.
			if !s.stillHeld(h) {
				s.errorf("lost %s while %s ran (it has exited with %d, but not under the lock)", h.what, argv[0], c.exitCode())
				return exitLost, true
			}
			return c.exitCode(), false
		case sig := <-s.sigs:
			c.signal(sig.(syscall.Signal))
		case <-h.lost:
			s.errorf("lost %s while %s ran: stopping it (SIGTERM, then SIGKILL after %v)", h.what, argv[0], grace)
			c.stop(grace)
			return exitLost, true
		}
	}
}

// stillHeld asks the server whether h is still held: its node still exists and
// belongs to zkr's session, so no one else can have held it meanwhile. One round
// trip, bounded by the session timeout; no answer counts as lost.
func (s *session) stillHeld(h *held) bool {
	select {
	case <-h.lost:
		return false
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.sessionTimeout)
	defer cancel()
	session := s.client.SessionID()
	ok, st, err := s.client.Exists(ctx, h.node)
	if err != nil || !ok || st.EphemeralOwner != session {
		s.log.Debug("zkr: the hold did not outlive the child", "node", h.node, "error", err)
		return false
	}
	select {
	case <-h.lost:
		return false
	default:
		return true
	}
}

func (s *session) release(h *held) {
	if h.release == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	if err := h.release(ctx); err != nil {
		// A lost hold says so here again, and an unfinished delete goes on until the
		// client closes the session, which deletes our node anyway.
		s.log.Debug("zkr: release", "node", h.node, "error", err)
	}
}
