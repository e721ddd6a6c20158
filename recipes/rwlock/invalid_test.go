package rwlock

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

// Bad input gets the documented error, at once and naming the problem: never a
// panic or a hang, and nothing left on the server.
func TestBadInput(t *testing.T) {
	srv := zkrtest.Server(t)
	c := newClient(t, []string{srv.Addr()})
	ctx := testCtx(t)

	t.Run("New", func(t *testing.T) {
		zkrtest.CheckConstructor(t, ErrInvalid, c, func(c *framework.Client, p string) error {
			l, err := New(c, p)
			require.Nil(t, l)
			return err
		})
		_, err := New(c, "/l", WithCuratorNames(), nil)
		require.ErrorIs(t, err, ErrInvalid)
		require.ErrorContains(t, err, "nil Option")
	})

	t.Run("release what is not held", func(t *testing.T) {
		l := newRW(t, c, "/locks/release")
		for _, side := range []*Lock{l.ReadLock(), l.WriteLock()} {
			require.ErrorIs(t, side.Release(ctx), ErrNotHeld)
			require.NoError(t, side.Acquire(ctx))
			require.NoError(t, side.Release(ctx))
			require.ErrorIs(t, side.Release(ctx), ErrNotHeld, "a second Release")
			require.False(t, side.IsAcquired())
			require.Zero(t, side.FencingToken())
			require.Empty(t, side.Node())
		}
	})

	t.Run("upgrade", func(t *testing.T) {
		l := newRW(t, c, "/locks/upgrade")
		require.NoError(t, l.ReadLock().Acquire(ctx))
		// Waiting would never end: the writer would wait for our own reader.
		require.ErrorIs(t, l.WriteLock().Acquire(context.Background()), ErrUpgrade)
		ok, err := l.WriteLock().TryAcquire(ctx)
		require.False(t, ok)
		require.ErrorIs(t, err, ErrUpgrade)
		require.Len(t, children(t, c, "/locks/upgrade"), 1, "no write node was made")
		require.NoError(t, l.ReadLock().Release(ctx))
	})

	t.Run("an ended context", func(t *testing.T) {
		ended, cancel := context.WithCancel(ctx)
		cancel()
		l := newRW(t, c, "/locks/ended")
		for _, side := range []*Lock{l.ReadLock(), l.WriteLock()} {
			require.ErrorIs(t, side.Acquire(ended), context.Canceled)
			ok, err := side.TryAcquire(ended)
			require.False(t, ok)
			require.ErrorIs(t, err, context.Canceled)
		}
		require.Empty(t, children(t, c, "/locks/ended"), "nothing was sent")
	})

	t.Run("a closed client", func(t *testing.T) {
		l := newRW(t, zkrtest.Closed(t, []string{srv.Addr()}), "/locks/closed")
		// No deadline: a hang would fail the test by its timeout.
		for _, side := range []*Lock{l.ReadLock(), l.WriteLock()} {
			require.ErrorIs(t, side.Acquire(context.Background()), framework.ErrClosed)
			_, err := side.TryAcquire(context.Background())
			require.ErrorIs(t, err, framework.ErrClosed)
			_, err = side.Participants(context.Background())
			require.ErrorIs(t, err, framework.ErrClosed)
			require.ErrorIs(t, side.Release(context.Background()), ErrNotHeld)
		}
	})
}

// Each option refuses a bad value at New, naming itself; so does a nil Option.
func TestBadOptions(t *testing.T) {
	c := zkrtest.Offline(t)
	zkrtest.CheckOptions(t, ErrInvalid, func(opts ...Option) error {
		l, err := New(c, "/l", opts...)
		require.Nil(t, l)
		return err
	}, []zkrtest.BadOption[Option]{
		{Opts: []Option{WithID("")}, Says: "WithID: empty id"},
		{Opts: []Option{WithCuratorNames(), nil}, Says: "nil Option (option 2 of 2)"},
	})
	l, err := New(c, "/l", WithID("x"), WithCuratorNames())
	require.NoError(t, err)
	require.NotNil(t, l)
}
