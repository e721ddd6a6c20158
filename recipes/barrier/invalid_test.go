package barrier

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

	t.Run("constructors", func(t *testing.T) {
		zkrtest.CheckConstructor(t, ErrInvalid, c, func(c *framework.Client, p string) error {
			_, err := New(c, p)
			return err
		})
		zkrtest.CheckConstructor(t, ErrInvalid, c, func(c *framework.Client, p string) error {
			_, err := NewDouble(c, p, 2)
			return err
		})
		for _, n := range []int{0, -1} {
			d, err := NewDouble(c, "/d", n)
			require.Nil(t, d)
			require.ErrorIs(t, err, ErrInvalid)
			require.ErrorContains(t, err, "members")
		}
	})

	t.Run("out of turn", func(t *testing.T) {
		d := newDouble(t, c, "/turns/double", 1)
		require.ErrorIs(t, d.Leave(ctx), ErrNotEntered)
		require.NoError(t, d.Enter(ctx), "one member: the barrier is full at once")
		require.ErrorIs(t, d.Enter(ctx), ErrEntered)
		require.NoError(t, d.Leave(ctx))
		require.ErrorIs(t, d.Leave(ctx), ErrNotEntered)
		require.Empty(t, children(t, c, "/turns/double"))
	})

	t.Run("an ended context", func(t *testing.T) {
		ended, cancel := context.WithCancel(ctx)
		cancel()
		d := newDouble(t, c, "/ended/double", 1)
		require.ErrorIs(t, d.Enter(ended), context.Canceled)
		require.Empty(t, children(t, c, "/ended/double"))
		require.NoError(t, d.Enter(ctx), "a failed Enter may be tried again")
		require.ErrorIs(t, d.Leave(ended), context.Canceled)
		require.Empty(t, children(t, c, "/ended/double"), "a cancelled Leave deletes our node")

		b, err := New(c, "/ended/barrier")
		require.NoError(t, err)
		require.ErrorIs(t, b.Set(ended), context.Canceled)
		require.NoError(t, b.Set(ctx))
		require.ErrorIs(t, b.Wait(ended), context.Canceled)
		require.ErrorIs(t, b.Remove(ended), context.Canceled)
	})

	t.Run("a closed client", func(t *testing.T) {
		closed := zkrtest.Closed(t, []string{srv.Addr()})
		// No deadline: a hang would fail the test by its timeout.
		d := newDouble(t, closed, "/closed/double", 1)
		require.ErrorIs(t, d.Enter(context.Background()), framework.ErrClosed)
		b, err := New(closed, "/closed/barrier")
		require.NoError(t, err)
		require.ErrorIs(t, b.Set(context.Background()), framework.ErrClosed)
		require.ErrorIs(t, b.Wait(context.Background()), framework.ErrClosed)
		require.ErrorIs(t, b.Remove(context.Background()), framework.ErrClosed)
	})
}
