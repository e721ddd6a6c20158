package integration

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/election"
	"github.com/zkrecipes/zkrecipes/recipes/multilock"
	"github.com/zkrecipes/zkrecipes/recipes/mutex"
	"github.com/zkrecipes/zkrecipes/recipes/rwlock"
	"github.com/zkrecipes/zkrecipes/recipes/semaphore"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// heldContext is what every hold gives: a context that ends when the hold may be
// lost.
type heldContext interface {
	Context(parent context.Context) (context.Context, context.CancelFunc)
}

// doer is a recipe's one call for acquire, run under the hold's context, release.
type doer struct {
	do      func(ctx context.Context, fn func(ctx context.Context) error) error
	context heldContext // the same recipe's Context, for the tests of Context alone
	acquire func(ctx context.Context) error
	release func(ctx context.Context) error
}

// holdKinds is every hold, with the error its context ends with once lost.
var holdKinds = []struct {
	name string
	lost error // the cause of its context's end on a loss
	// doLost is what Do's error wraps after a loss, when not lost: a multi-lock's
	// Release returns its locks' errors.
	doLost  error
	notHeld error
	invalid error // wrapped by Do's refusal of a nil function
	// selector: lead, the Selector's Do, runs on the selector's goroutine under a
	// context of its own: only the loss test applies.
	selector bool
	make     func(t *testing.T, c *framework.Client, p string) doer
}{
	{name: "mutex", invalid: mutex.ErrInvalid, lost: mutex.ErrLost, notHeld: mutex.ErrNotHeld,
		make: func(t *testing.T, c *framework.Client, p string) doer {
			m, err := mutex.New(c, p)
			require.NoError(t, err)
			return doer{m.Do, m, m.Acquire, m.Release}
		}},
	{name: "rwlock-read", invalid: rwlock.ErrInvalid, lost: rwlock.ErrLost, notHeld: rwlock.ErrNotHeld,
		make: func(t *testing.T, c *framework.Client, p string) doer {
			l, err := rwlock.New(c, p)
			require.NoError(t, err)
			r := l.ReadLock()
			return doer{r.Do, r, r.Acquire, r.Release}
		}},
	{name: "rwlock-write", invalid: rwlock.ErrInvalid, lost: rwlock.ErrLost, notHeld: rwlock.ErrNotHeld,
		make: func(t *testing.T, c *framework.Client, p string) doer {
			l, err := rwlock.New(c, p)
			require.NoError(t, err)
			w := l.WriteLock()
			return doer{w.Do, w, w.Acquire, w.Release}
		}},
	{name: "semaphore-mutex", invalid: semaphore.ErrInvalid, lost: semaphore.ErrLost, notHeld: semaphore.ErrNotHeld,
		make: func(t *testing.T, c *framework.Client, p string) doer {
			m, err := semaphore.NewMutex(c, p)
			require.NoError(t, err)
			return doer{m.Do, m, m.Acquire, m.Release}
		}},
	{name: "semaphore-leases", invalid: semaphore.ErrInvalid, lost: semaphore.ErrLost,
		make: func(t *testing.T, c *framework.Client, p string) doer {
			s, err := semaphore.New(c, p, 3)
			require.NoError(t, err)
			return doer{do: func(ctx context.Context, fn func(ctx context.Context) error) error {
				if fn == nil {
					return s.Do(ctx, 2, nil)
				}
				return s.Do(ctx, 2, func(ctx context.Context, leases []*semaphore.Lease) error {
					require.Len(t, leases, 2)
					return fn(ctx)
				})
			}}
		}},
	{name: "multilock", invalid: multilock.ErrInvalid, lost: multilock.ErrLost, doLost: mutex.ErrLost, notHeld: multilock.ErrNotHeld,
		make: func(t *testing.T, c *framework.Client, p string) doer {
			m, err := multilock.NewMutexes(c, []string{p + "/a", p + "/b"})
			require.NoError(t, err)
			return doer{m.Do, m, m.Acquire, m.Release}
		}},
	{name: "selector", invalid: election.ErrInvalid, lost: election.ErrLeadershipLost, selector: true,
		make: func(t *testing.T, c *framework.Client, p string) doer {
			return doer{do: func(ctx context.Context, fn func(ctx context.Context) error) error {
				if fn == nil {
					_, err := election.NewSelector(c, p, nil)
					return err
				}
				result := make(chan error, 1)
				s, err := election.NewSelector(c, p, func(ctx context.Context, _ election.Term) error {
					err := fn(ctx)
					result <- err
					return err
				})
				if err != nil {
					return err
				}
				defer func() { _ = s.Close(context.Background()) }()
				if err := s.Start(ctx); err != nil {
					return err
				}
				return <-result
			}}
		}},
}

// TestHoldContextEndsOnLoss: the function run under every hold sees its context end,
// with the recipe's loss as the cause, when the connection is cut (the default error
// policy counts Suspended as a loss), and Do says the hold was lost.
func TestHoldContextEndsOnLoss(t *testing.T) {
	srv := zktest.NewServer(t)
	for _, kind := range holdKinds {
		t.Run(kind.name, func(t *testing.T) {
			ctx := testCtx(t)
			proxy := zktest.NewProxy(t, srv.Addr())
			c := newClient(t, []string{proxy.Addr()})
			p := "/holdctx/loss/" + kind.name
			h := kind.make(t, c, p)
			running := make(chan struct{})
			var cause error
			err := h.do(ctx, func(ctx context.Context) error {
				close(running)
				proxy.Cut()
				<-ctx.Done()
				proxy.Restore() // the session goes on: Release deletes our node
				cause = context.Cause(ctx)
				return ctx.Err()
			})
			require.ErrorIs(t, cause, kind.lost)
			require.ErrorIs(t, err, context.Canceled)
			if !kind.selector { // a selector logs a lost term
				doLost := kind.lost
				if kind.doLost != nil {
					doLost = kind.doLost
				}
				require.ErrorIs(t, err, doLost, "Do says the hold was lost")
			}
			<-running
			requireNoEphemerals(t, newClient(t, []string{srv.Addr()}), p)
		})
	}
}

// TestDoRefusesANilFunction before it sends anything.
func TestDoRefusesANilFunction(t *testing.T) {
	srv := zktest.NewServer(t)
	c := newClient(t, []string{srv.Addr()})
	for _, kind := range holdKinds {
		p := "/holdctx/nil/" + kind.name
		require.ErrorIs(t, kind.make(t, c, p).do(testCtx(t), nil), kind.invalid, kind.name)
		requireNoEphemerals(t, c, p)
		ok, _, err := c.Exists(testCtx(t), p)
		require.NoError(t, err)
		require.False(t, ok, "%s: nothing created", kind.name)
	}
}

// TestHoldContextEndsOnSessionExpiry: with the session error policy only the
// session's end counts, and a real expiry on the server ends the context.
func TestHoldContextEndsOnSessionExpiry(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	const session = 2 * time.Second
	c := newClient(t, []string{proxy.Addr()}, framework.WithSessionTimeout(session),
		framework.WithErrorPolicy(framework.SessionErrorPolicy))
	m, err := mutex.New(c, "/holdctx/expiry")
	require.NoError(t, err)
	err = m.Do(ctx, func(held context.Context) error {
		expired := make(chan error, 1)
		go func() { expired <- proxy.ExpireSession(ctx, session) }()
		<-held.Done()
		require.ErrorIs(t, context.Cause(held), mutex.ErrLost)
		return <-expired
	})
	require.ErrorIs(t, err, mutex.ErrLost)
	requireNoEphemerals(t, newClient(t, []string{srv.Addr()}), "/holdctx/expiry")
}

// TestDoReleasesWhenTheFunctionPanics: the panic reaches Do's caller, after the hold
// was released; the recipe can be taken again at once.
func TestDoReleasesWhenTheFunctionPanics(t *testing.T) {
	srv := zktest.NewServer(t)
	c := newClient(t, []string{srv.Addr()})
	for _, kind := range holdKinds {
		if kind.selector {
			continue
		}
		t.Run(kind.name, func(t *testing.T) {
			ctx := testCtx(t)
			p := "/holdctx/panic/" + kind.name
			h := kind.make(t, c, p)
			recovered := func() (v any) {
				defer func() { v = recover() }()
				_ = h.do(ctx, func(ctx context.Context) error { panic("boom") })
				return nil
			}()
			require.Equal(t, "boom", recovered)
			requireNoEphemerals(t, c, p)
			other := kind.make(t, newClient(t, []string{srv.Addr()}), p)
			require.NoError(t, other.do(ctx, func(ctx context.Context) error { return ctx.Err() }))
		})
	}
}

// TestHoldContextFollowsItsParent: cancelling the parent ends the function's context
// with the parent's cause, and Do releases; Context alone leaves the hold held.
func TestHoldContextFollowsItsParent(t *testing.T) {
	srv := zktest.NewServer(t)
	c := newClient(t, []string{srv.Addr()})
	stopped := errors.New("stopped by the caller")
	for _, kind := range holdKinds {
		if kind.selector {
			continue
		}
		t.Run(kind.name, func(t *testing.T) {
			ctx := testCtx(t)
			p := "/holdctx/parent/" + kind.name
			h := kind.make(t, c, p)
			parent, cancel := context.WithCancelCause(ctx)
			err := h.do(parent, func(held context.Context) error {
				cancel(stopped)
				<-held.Done()
				return context.Cause(held)
			})
			require.ErrorIs(t, err, stopped)
			requireNoEphemerals(t, c, p)

			if h.context == nil {
				return
			}
			held, stop := h.context.Context(ctx)
			defer stop()
			<-held.Done()
			require.ErrorIs(t, context.Cause(held), kind.notHeld, "no hold: ended at once")

			require.NoError(t, h.acquire(ctx))
			parent, cancel = context.WithCancelCause(ctx)
			held, stop = h.context.Context(parent)
			defer stop()
			cancel(stopped)
			<-held.Done()
			require.ErrorIs(t, context.Cause(held), stopped)
			require.NoError(t, h.release(ctx), "still held after the parent ended")

			require.NoError(t, h.acquire(ctx))
			held, stop = h.context.Context(ctx)
			defer stop()
			require.NoError(t, h.release(ctx))
			<-held.Done() // Release ends it
		})
	}
}

// TestLatchContextFollowsLeadership: a latch's Context ends when its leadership may
// be lost, and at once when it does not lead.
func TestLatchContextFollowsLeadership(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	c := newClient(t, []string{proxy.Addr()})
	l, err := election.NewLatch(c, "/holdctx/latch")
	require.NoError(t, err)
	defer func() { _ = l.Close(context.Background()) }()

	notYet, stop := l.Context(ctx)
	defer stop()
	<-notYet.Done()
	require.ErrorIs(t, context.Cause(notYet), election.ErrNotLeader)

	require.NoError(t, l.Start(ctx))
	require.NoError(t, l.Await(ctx))
	leading, stop := l.Context(ctx)
	defer stop()
	require.NoError(t, leading.Err(), "leads: the context goes on")
	proxy.Cut()
	<-leading.Done()
	proxy.Restore()
	require.ErrorIs(t, context.Cause(leading), election.ErrNotLeader)
}

// TestLeaseContextFollowsItsLease: one lease's Context ends, with ErrLost, when that
// lease is released, and when it may be lost; the other lease's goes on meanwhile.
func TestLeaseContextFollowsItsLease(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	s, err := semaphore.New(newClient(t, []string{proxy.Addr()}), "/holdctx/lease", 3)
	require.NoError(t, err)
	leases, err := s.Acquire(ctx, 2)
	require.NoError(t, err)
	released, stop := leases[0].Context(ctx)
	defer stop()
	held, stop := leases[1].Context(ctx)
	defer stop()
	require.NoError(t, released.Err())

	require.NoError(t, leases[0].Release(ctx))
	<-released.Done()
	require.ErrorIs(t, context.Cause(released), semaphore.ErrLost)
	require.NoError(t, held.Err(), "the other lease's goes on")

	proxy.Cut()
	<-held.Done()
	proxy.Restore()
	require.ErrorIs(t, context.Cause(held), semaphore.ErrLost)
	require.ErrorIs(t, leases[1].Release(ctx), semaphore.ErrLost)
	requireNoEphemerals(t, newClient(t, []string{srv.Addr()}), "/holdctx/lease")
}

// requireNoEphemerals waits until no ephemeral node is left under p.
func requireNoEphemerals(t *testing.T, c *framework.Client, p string) {
	t.Helper()
	var left []string
	require.Eventually(t, func() bool {
		left = nil
		err := walk(c, p, func(n string, st *framework.Stat) {
			if st.EphemeralOwner != 0 {
				left = append(left, n)
			}
		})
		return err == nil && len(left) == 0
	}, wait, 10*time.Millisecond, "nodes left: %v", left)
}
