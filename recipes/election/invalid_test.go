package election

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
	lead := func(ctx context.Context, _ Term) error { <-ctx.Done(); return nil }

	t.Run("constructors", func(t *testing.T) {
		newLatch := func(c *framework.Client, p string, opts ...Option) error {
			_, err := NewLatch(c, p, opts...)
			return err
		}
		newSelector := func(c *framework.Client, p string, opts ...Option) error {
			_, err := NewSelector(c, p, lead, opts...)
			return err
		}
		for name, construct := range map[string]func(*framework.Client, string, ...Option) error{"NewLatch": newLatch, "NewSelector": newSelector} {
			zkrtest.CheckConstructor(t, ErrInvalid, c, func(c *framework.Client, p string) error { return construct(c, p) })
			err := construct(c, "/e", WithID("x"), nil)
			require.ErrorIs(t, err, ErrInvalid, name)
			require.ErrorContains(t, err, "nil Option", name)
		}
		s, err := NewSelector(c, "/e", nil)
		require.Nil(t, s)
		require.ErrorIs(t, err, ErrInvalid)
		require.ErrorContains(t, err, "nil lead function")
	})

	t.Run("latch out of turn", func(t *testing.T) {
		l := newLatch(t, c, "/election/latch")
		require.ErrorIs(t, l.Await(context.Background()), ErrNotStarted)
		stop := l.Listen(nil)
		stop()
		require.NoError(t, l.Start(ctx))
		require.ErrorIs(t, l.Start(ctx), ErrStarted)
		require.NoError(t, l.Close(ctx))
		require.NoError(t, l.Close(ctx), "a second Close")
		require.ErrorIs(t, l.Start(ctx), ErrClosed)
		require.ErrorIs(t, l.Await(context.Background()), ErrClosed)
		require.False(t, l.IsLeader())
		require.Empty(t, l.Node())
		require.Zero(t, l.FencingToken())
		_, err := l.Leader(ctx)
		require.ErrorIs(t, err, ErrNoLeader, "nobody takes part any more")
		require.Empty(t, children(t, c, "/election/latch"))

		unstarted := newLatch(t, c, "/election/unstarted")
		require.NoError(t, unstarted.Close(ctx), "closing a latch never started")
		require.ErrorIs(t, unstarted.Start(ctx), ErrClosed)
	})

	t.Run("selector out of turn", func(t *testing.T) {
		s, err := NewSelector(c, "/election/selector", lead)
		require.NoError(t, err)
		require.ErrorIs(t, s.Requeue(), ErrNotStarted)
		s.InterruptLeadership() // not leading: nothing happens
		require.NoError(t, s.Start(ctx))
		require.ErrorIs(t, s.Start(ctx), ErrStarted)
		require.NoError(t, s.Requeue(), "a requeue while queued is the same term")
		require.NoError(t, s.Close(ctx))
		require.NoError(t, s.Close(ctx), "a second Close")
		require.ErrorIs(t, s.Start(ctx), ErrClosed)
		require.ErrorIs(t, s.Requeue(), ErrClosed)
		require.False(t, s.IsLeader())
		require.Empty(t, children(t, c, "/election/selector"))
	})

	t.Run("an ended context", func(t *testing.T) {
		ended, cancel := context.WithCancel(ctx)
		cancel()
		l := newLatch(t, c, "/election/ended")
		require.ErrorIs(t, l.Start(ended), context.Canceled)
		require.Empty(t, children(t, c, "/election/ended"), "nothing was sent")
		require.NoError(t, l.Start(ctx), "a Start that failed may be tried again")
		require.NoError(t, l.Close(ctx))
	})

	t.Run("a closed client", func(t *testing.T) {
		closed := zkrtest.Closed(t, []string{srv.Addr()})
		l := newLatch(t, closed, "/election/closed")
		// No deadline: a hang would fail the test by its timeout.
		require.ErrorIs(t, l.Start(context.Background()), framework.ErrClosed)
		_, err := l.Leader(context.Background())
		require.ErrorIs(t, err, framework.ErrClosed)
		_, err = l.Participants(context.Background())
		require.ErrorIs(t, err, framework.ErrClosed)
		require.NoError(t, l.Close(context.Background()))

		s, err := NewSelector(closed, "/election/closed", lead)
		require.NoError(t, err)
		require.ErrorIs(t, s.Start(context.Background()), framework.ErrClosed)
		_, err = s.Leader(context.Background())
		require.ErrorIs(t, err, framework.ErrClosed)
		require.NoError(t, s.Close(context.Background()))
	})
}

// Each option refuses a bad value at NewLatch and NewSelector, naming itself; so
// does a nil Option.
func TestBadOptions(t *testing.T) {
	c := zkrtest.Offline(t)
	lead := func(ctx context.Context, _ Term) error { <-ctx.Done(); return nil }
	bad := []zkrtest.BadOption[Option]{
		{Opts: []Option{WithID("")}, Says: "WithID: empty id"},
		{Opts: []Option{AutoRequeue(), NotifyOnClose(), nil}, Says: "nil Option (option 3 of 3)"},
	}
	zkrtest.CheckOptions(t, ErrInvalid, func(opts ...Option) error {
		l, err := NewLatch(c, "/e", opts...)
		require.Nil(t, l)
		return err
	}, bad)
	zkrtest.CheckOptions(t, ErrInvalid, func(opts ...Option) error {
		s, err := NewSelector(c, "/e", lead, opts...)
		require.Nil(t, s)
		return err
	}, bad)
	_, err := NewLatch(c, "/e", WithID("x"), NotifyOnClose())
	require.NoError(t, err)
	_, err = NewSelector(c, "/e", lead, WithID("x"), AutoRequeue())
	require.NoError(t, err)
}
