package integration

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/recipes/barrier"
	"github.com/zkrecipes/zkrecipes/recipes/election"
	"github.com/zkrecipes/zkrecipes/recipes/group"
	"github.com/zkrecipes/zkrecipes/recipes/multilock"
	"github.com/zkrecipes/zkrecipes/recipes/mutex"
	"github.com/zkrecipes/zkrecipes/recipes/nodes"
	"github.com/zkrecipes/zkrecipes/recipes/rwlock"
	"github.com/zkrecipes/zkrecipes/recipes/shared"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// ended is a context that has ended already.
func ended() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// TestEndedContextBefore: every blocking call of every recipe (the closed-client
// table's), made with a live client and a ctx that has already ended, returns an
// error wrapping ctx's, as the standard library's calls do, and leaves no node.
func TestEndedContextBefore(t *testing.T) {
	srv := zktest.NewServer(t)
	c := newClient(t, []string{srv.Addr()})
	for i, tc := range closedCalls {
		t.Run(tc.name, func(t *testing.T) {
			p := fmt.Sprintf("/ended/before/%d", i)
			require.ErrorIs(t, tc.call(t, ended(), c, p), context.Canceled)
			names, err := zkrtest.List(c, p)
			require.NoError(t, err)
			require.Empty(t, names, "a call whose ctx had ended left a node")
		})
	}
}

// TestEndedContextReady: a call that could answer without a request (the latch
// leads, the lock is held, the client is connected) still returns ctx's error when
// ctx has ended, so that a loop around it ends with its ctx (issue 44: the election
// guide's poller spun on Await). A reentrant acquire with an ended ctx does not count
// up: one Release still releases.
func TestEndedContextReady(t *testing.T) {
	srv := zktest.NewServer(t)
	c := newClient(t, []string{srv.Addr()})

	t.Run("framework.WaitConnected", func(t *testing.T) {
		require.ErrorIs(t, c.WaitConnected(ended()), context.Canceled)
	})
	t.Run("framework.Retry", func(t *testing.T) {
		ran := false
		err := c.Retry(ended(), func(context.Context) error { ran = true; return nil })
		require.ErrorIs(t, err, context.Canceled)
		require.False(t, ran, "the operation ran for a ctx that had ended")
	})
	t.Run("framework.AddWatch", func(t *testing.T) { // the path's server watch is set already
		w, err := c.AddWatch(testCtx(t), "/ended/ready/watched", framework.WatchPersistent)
		require.NoError(t, err)
		t.Cleanup(func() { _ = w.Close(context.Background()) })
		_, err = c.AddWatch(ended(), "/ended/ready/watched", framework.WatchPersistent)
		require.ErrorIs(t, err, context.Canceled)
	})
	t.Run("nodes.SetData", func(t *testing.T) {
		n, err := nodes.New(c, "/ended/ready/node", []byte("one"))
		require.NoError(t, err)
		t.Cleanup(func() { _ = n.Close(context.Background()) })
		require.NoError(t, n.Start(testCtx(t)))
		require.ErrorIs(t, n.SetData(ended(), []byte("two")), context.Canceled)
	})
	t.Run("group.SetPayload", func(t *testing.T) {
		m, err := group.New(c, "/ended/ready/group", "m", []byte("one"))
		require.NoError(t, err)
		t.Cleanup(func() { _ = m.Close(context.Background()) })
		require.NoError(t, m.Start(testCtx(t)))
		require.ErrorIs(t, m.SetPayload(ended(), []byte("two")), context.Canceled)
	})
	t.Run("shared.Value.Set", func(t *testing.T) {
		v, err := shared.NewValue(c, "/ended/ready/value", []byte("one"))
		require.NoError(t, err)
		t.Cleanup(func() { _ = v.Close(context.Background()) })
		require.NoError(t, v.Start(testCtx(t)))
		require.ErrorIs(t, v.Set(ended(), []byte("two")), context.Canceled)
		_, err = v.TrySet(ended(), v.Get(), []byte("two"))
		require.ErrorIs(t, err, context.Canceled)
	})
	t.Run("election.Latch.Await", func(t *testing.T) {
		l, err := election.NewLatch(c, "/ended/ready/latch")
		require.NoError(t, err)
		t.Cleanup(func() { _ = l.Close(context.Background()) })
		require.NoError(t, l.Start(testCtx(t)))
		require.NoError(t, l.Await(testCtx(t)))
		require.ErrorIs(t, l.Await(ended()), context.Canceled)
		require.True(t, l.IsLeader(), "an Await that gave up does not end leadership")
	})

	// reentrant are the reentrant locks: an acquire while held counts up.
	reentrant := []struct {
		name string
		lock func(t *testing.T, p string) reentrantLock
	}{
		{"mutex", func(t *testing.T, p string) reentrantLock {
			m, err := mutex.New(c, p)
			require.NoError(t, err)
			return m
		}},
		{"rwlock.WriteLock", func(t *testing.T, p string) reentrantLock {
			l, err := rwlock.New(c, p)
			require.NoError(t, err)
			return l.WriteLock()
		}},
		{"rwlock.ReadLock", func(t *testing.T, p string) reentrantLock {
			l, err := rwlock.New(c, p)
			require.NoError(t, err)
			return l.ReadLock()
		}},
	}
	for i, tc := range reentrant {
		t.Run(tc.name, func(t *testing.T) {
			l := tc.lock(t, fmt.Sprintf("/ended/ready/%d", i))
			require.NoError(t, l.Acquire(testCtx(t)))
			require.ErrorIs(t, l.Acquire(ended()), context.Canceled)
			ok, err := l.TryAcquire(ended())
			require.ErrorIs(t, err, context.Canceled)
			require.False(t, ok)
			require.True(t, l.IsAcquired(), "an acquire that gave up does not release")
			require.NoError(t, l.Release(testCtx(t)))
			require.False(t, l.IsAcquired(), "an acquire whose ctx had ended counted up")
		})
	}

	t.Run("multilock", func(t *testing.T) {
		m, err := multilock.NewMutexes(c, []string{"/ended/ready/multi-a", "/ended/ready/multi-b"})
		require.NoError(t, err)
		require.NoError(t, m.Acquire(testCtx(t)))
		require.ErrorIs(t, m.Acquire(ended()), context.Canceled)
		require.True(t, m.IsAcquired())
		require.NoError(t, m.Release(testCtx(t)))
		require.False(t, m.IsAcquired(), "an acquire whose ctx had ended counted up")
	})
	t.Run("barrier.Wait", func(t *testing.T) {
		b, err := barrier.New(c, "/ended/ready/barrier") // never set: Wait would pass
		require.NoError(t, err)
		require.ErrorIs(t, b.Wait(ended()), context.Canceled)
	})
	t.Run("barrier.Double", func(t *testing.T) {
		d, err := barrier.NewDouble(c, "/ended/ready/double", 1) // one member: Enter passes
		require.NoError(t, err)
		require.ErrorIs(t, d.Enter(ended()), context.Canceled)
		require.NoError(t, d.Enter(testCtx(t)))
		require.ErrorIs(t, d.Leave(ended()), context.Canceled)
	})
}

// reentrantLock is a lock that a holder may acquire again, counting up.
type reentrantLock interface {
	Acquire(ctx context.Context) error
	TryAcquire(ctx context.Context) (bool, error)
	Release(ctx context.Context) error
	IsAcquired() bool
}
