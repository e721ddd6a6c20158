package semaphore

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// Bad input gets the documented error, at once and naming the problem: never a
// panic or a hang, and nothing left on the server.
func TestBadInput(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})

	t.Run("constructors", func(t *testing.T) {
		newSem := func(c *framework.Client, p string, opts ...Option) error { _, err := New(c, p, 1, opts...); return err }
		newMx := func(c *framework.Client, p string, opts ...Option) error {
			_, err := NewMutex(c, p, opts...)
			return err
		}
		for name, construct := range map[string]func(*framework.Client, string, ...Option) error{"New": newSem, "NewMutex": newMx} {
			zkrtest.CheckConstructor(t, ErrInvalid, c, func(c *framework.Client, p string) error { return construct(c, p) })
			err := construct(c, "/sem", WithID("x"), nil)
			require.ErrorIs(t, err, ErrInvalid, name)
			require.ErrorContains(t, err, "nil Option", name)
		}
		for _, max := range []int{0, -1, -1 << 62} {
			s, err := New(c, "/sem", max)
			require.Nil(t, s)
			require.ErrorIs(t, err, ErrInvalid)
			require.ErrorContains(t, err, "maxLeases "+strconv.Itoa(max)+" is not positive")
		}
	})

	t.Run("lease counts", func(t *testing.T) {
		s := newSemaphore(t, c, "/sem", 2)
		for _, n := range []int{0, -1, 3, 1 << 62} {
			ls, err := s.Acquire(context.Background(), n)
			require.Nil(t, ls)
			require.ErrorIs(t, err, ErrInvalid, "Acquire(%d)", n)
			require.ErrorContains(t, err, strconv.Itoa(n)+" leases asked of a semaphore of 2")
			ls, err = s.TryAcquire(ctx, n)
			require.Nil(t, ls)
			require.ErrorIs(t, err, ErrInvalid, "TryAcquire(%d)", n)
		}
		require.Empty(t, children(t, c, "/sem"), "invalid acquisitions send nothing")
	})

	t.Run("release what is not held", func(t *testing.T) {
		m := newMutex(t, c, "/mx")
		require.ErrorIs(t, m.Release(ctx), ErrNotHeld)
		require.False(t, m.IsAcquired())
		require.Empty(t, m.Node())
		require.Zero(t, m.FencingToken())
		select {
		case <-m.Lost():
		default:
			t.Fatal("Lost is open without a hold")
		}
		require.NoError(t, m.Acquire(ctx))
		require.NoError(t, m.Release(ctx))
		require.ErrorIs(t, m.Release(ctx), ErrNotHeld, "a second Release")

		var nilLease *Lease
		require.ErrorIs(t, nilLease.Release(ctx), ErrNotHeld)
		require.Empty(t, nilLease.Node())
		require.Zero(t, nilLease.FencingToken())
		s := newSemaphore(t, c, "/sem", 2)
		ls, err := s.Acquire(ctx, 1)
		require.NoError(t, err)
		require.NoError(t, ls[0].Release(ctx))
		require.ErrorIs(t, ls[0].Release(ctx), ErrNotHeld, "a second release")
		select {
		case <-ls[0].Lost():
		default:
			t.Fatal("Lost is open after Release")
		}
	})

	t.Run("an ended context", func(t *testing.T) {
		ended, cancel := context.WithCancel(ctx)
		cancel()
		s := newSemaphore(t, c, "/ended", 2)
		_, err := s.Acquire(ended, 1)
		require.ErrorIs(t, err, context.Canceled)
		_, err = s.TryAcquire(ended, 2)
		require.ErrorIs(t, err, context.Canceled)
		m := newMutex(t, c, "/ended-mx")
		require.ErrorIs(t, m.Acquire(ended), context.Canceled)
		ok, err := m.TryAcquire(ended)
		require.False(t, ok)
		require.ErrorIs(t, err, context.Canceled)
		require.Empty(t, children(t, c, "/ended"), "nothing was sent")
		require.Empty(t, children(t, c, "/ended-mx"), "nothing was sent")
	})

	t.Run("a closed client", func(t *testing.T) {
		closed := zkrtest.Closed(t, []string{srv.Addr()})
		s := newSemaphore(t, closed, "/closed", 2)
		// No deadline: a hang would fail the test by its timeout.
		_, err := s.Acquire(context.Background(), 1)
		require.ErrorIs(t, err, framework.ErrClosed)
		_, err = s.TryAcquire(context.Background(), 1)
		require.ErrorIs(t, err, framework.ErrClosed)
		_, err = s.Participants(context.Background())
		require.ErrorIs(t, err, framework.ErrClosed)
		m := newMutex(t, closed, "/closed-mx")
		require.ErrorIs(t, m.Acquire(context.Background()), framework.ErrClosed)
		_, err = m.TryAcquire(context.Background())
		require.ErrorIs(t, err, framework.ErrClosed)
		require.ErrorIs(t, m.Release(context.Background()), ErrNotHeld)
	})
}

// Each option refuses a bad value at New and NewMutex, naming itself; so does a nil
// Option.
func TestBadOptions(t *testing.T) {
	t.Parallel()
	c := zkrtest.Offline(t)
	bad := []zkrtest.BadOption[Option]{
		{Opts: []Option{WithID("")}, Says: "WithID: empty id"},
		{Opts: []Option{WithID("x"), nil}, Says: "nil Option (option 2 of 2)"},
	}
	zkrtest.CheckOptions(t, ErrInvalid, func(opts ...Option) error {
		s, err := New(c, "/sem", 2, opts...)
		require.Nil(t, s)
		return err
	}, bad)
	zkrtest.CheckOptions(t, ErrInvalid, func(opts ...Option) error {
		m, err := NewMutex(c, "/mx", opts...)
		require.Nil(t, m)
		return err
	}, bad)
	_, err := New(c, "/sem", 2, WithID("x"))
	require.NoError(t, err)
	_, err = NewMutex(c, "/mx", WithID("x"))
	require.NoError(t, err)
}
