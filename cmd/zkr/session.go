package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
)

// The session layer every command that holds something shares (lock, rlock, wlock,
// semaphore, elect): connecting, catching signals, waiting with progress, holding
// while the child runs and releasing.

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
	auth, err := e.auth.options()
	if err != nil {
		return nil, err
	}
	opts = append(opts, auth...)
	login, err := e.sasl.options()
	if err != nil {
		return nil, err
	}
	opts = append(opts, login...)
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
	defer c.close() // before the release: nothing CMD started runs on
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
