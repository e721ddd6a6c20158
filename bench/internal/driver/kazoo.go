package driver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

const kazooName = "kazoo"

// kazooPython is Debian's interpreter, which python3-kazoo installs for; a python3
// earlier on the PATH (a virtualenv's, pyenv's) may not have it.
const kazooPython = "/usr/bin/python3"

// kazooPeer is kazoo's SetPartitioner, driven through bench/kazoo-peer/kazoo_peer.py:
// one Python process for the whole benchmark, fresh sessions for every trial. It
// takes part in the partition scenarios only.
type kazooPeer struct {
	*process
	replies chan string // every line but the members' RUN and STOP

	mu    sync.Mutex
	crowd *kazooCrowd // the trial under way, which gets the RUN and STOP lines
}

// startKazoo starts the peer; script is kazoo_peer.py.
func startKazoo(ctx context.Context, script, addr string) (*kazooPeer, error) {
	if _, err := os.Stat(script); err != nil {
		return nil, fmt.Errorf("kazoo's peer: %w", err)
	}
	if out, err := exec.CommandContext(ctx, kazooPython, "-c", "import kazoo.recipe.partitioner").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("kazoo is not installed (run `scripts/deps.sh kazoo`): %w: %s", err, out)
	}
	proc, err := startProcess(kazooPython, script, addr)
	if err != nil {
		return nil, fmt.Errorf("kazoo's peer: %w", err)
	}
	k := &kazooPeer{process: proc, replies: make(chan string, 16)}
	go k.route()
	if _, err := k.expect(ctx, "READY"); err != nil {
		k.close()
		return nil, err
	}
	return k, nil
}

// route hands the RUN and STOP lines to the trial under way, the others to expect.
func (k *kazooPeer) route() {
	defer close(k.replies)
	for line := range k.lines {
		f := strings.Fields(line)
		if len(f) != 4 || (f[0] != "RUN" && f[0] != "STOP") {
			k.replies <- line
			continue
		}
		ns, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			k.replies <- line
			continue
		}
		k.mu.Lock()
		c := k.crowd
		k.mu.Unlock()
		if c == nil {
			continue
		}
		for _, item := range strings.Split(f[3], ",") {
			c.say(itemEvent{at: time.Duration(ns), member: f[2], item: item, running: f[0] == "RUN"})
		}
	}
}

// errKazoo is a failure the peer reported (an ERROR line).
var errKazoo = errors.New("kazoo peer")

// expect returns the next reply, which must start with prefix.
func (k *kazooPeer) expect(ctx context.Context, prefix string) (string, error) {
	select {
	case line, ok := <-k.replies:
		switch {
		case !ok:
			return "", fmt.Errorf("%w: exited while we waited for %s", errKazoo, prefix)
		case strings.HasPrefix(line, "ERROR"):
			return "", fmt.Errorf("%w: %s", errKazoo, line)
		case !strings.HasPrefix(line, prefix):
			return "", fmt.Errorf("%w: said %q where we waited for %s", errKazoo, line, prefix)
		}
		return line, nil
	case <-ctx.Done():
		return "", fmt.Errorf("%w: waiting for %s: %w", errKazoo, prefix, ctx.Err())
	}
}

// ask sends a command and returns the reply, which must start with prefix.
func (k *kazooPeer) ask(ctx context.Context, command, prefix string) (string, error) {
	if err := k.send(command); err != nil {
		return "", err
	}
	return k.expect(ctx, prefix)
}

func (k *kazooPeer) Name() string       { return kazooName }
func (k *kazooPeer) InProcess() bool    { return false }
func (k *kazooPeer) CPU() time.Duration { return k.cpu() }

func (k *kazooPeer) Close() error {
	k.close()
	for range k.replies {
	}
	return nil
}

func (k *kazooPeer) Prepare(ctx context.Context, w workload) (trial, error) {
	switch w.Kind {
	case partitionJoin, partitionLeave, partitionLoss:
	default:
		return nil, errUnsupported
	}
	c := &kazooCrowd{k: k, evs: make(chan itemEvent, 4096), done: make(chan struct{})}
	k.mu.Lock()
	k.crowd = c
	k.mu.Unlock()
	command := fmt.Sprintf("partition %s %g %s", w.Path, kazooTimeBoundary.Seconds(), strings.Join(itemNames(w.Items), ","))
	if _, err := k.ask(ctx, command, "OK"); err != nil {
		c.close()
		return nil, err
	}
	return newPartitionTrial(ctx, w, c)
}

// kazooCrowd is one trial's members in the peer; its clock is the peer's
// time.monotonic_ns.
type kazooCrowd struct {
	k    *kazooPeer
	evs  chan itemEvent
	done chan struct{}
	once sync.Once
}

func (c *kazooCrowd) events() <-chan itemEvent { return c.evs }

func (c *kazooCrowd) say(e itemEvent) {
	select {
	case c.evs <- e:
	case <-c.done:
	}
}

func (c *kazooCrowd) connect(ctx context.Context, id string) error {
	_, err := c.k.ask(ctx, "connect "+id, "OK")
	return err
}

func (c *kazooCrowd) change(ctx context.Context, what, id string) (time.Duration, error) {
	line, err := c.k.ask(ctx, what+" "+id, "AT ")
	if err != nil {
		return 0, err
	}
	ns, err := strconv.ParseInt(strings.TrimPrefix(line, "AT "), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: bad time in %q", errKazoo, line)
	}
	return time.Duration(ns), nil
}

func (c *kazooCrowd) join(ctx context.Context, id string) (time.Duration, error) {
	return c.change(ctx, "join", id)
}

func (c *kazooCrowd) leave(ctx context.Context, id string) (time.Duration, error) {
	return c.change(ctx, "leave", id)
}

func (c *kazooCrowd) lose(ctx context.Context, id string) (time.Duration, error) {
	return c.change(ctx, "lose", id)
}

// close stops every member; the replies up to CLOSED (an ERROR's late answer, say)
// are dropped.
func (c *kazooCrowd) close() {
	c.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if c.k.send("close") == nil {
			c.k.skipUntil(ctx, "CLOSED")
		}
		c.k.mu.Lock()
		c.k.crowd = nil
		c.k.mu.Unlock()
		close(c.done)
	})
}

// skipUntil drops replies until line, the peer's end, or ctx's.
func (k *kazooPeer) skipUntil(ctx context.Context, line string) {
	for {
		select {
		case l, ok := <-k.replies:
			if !ok || l == line {
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

// kazooVersion is the installed package's version, as dpkg says it.
func kazooVersion(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "dpkg-query", "-W", "-f=${Version}", "python3-kazoo").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}
