package shared

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

// Bad input gets the documented error, at once and naming the problem: never a
// panic or a hang.
func TestBadInput(t *testing.T) {
	srv := zkrtest.Server(t)
	c := newClient(t, []string{srv.Addr()})
	ctx := testCtx(t)

	t.Run("New", func(t *testing.T) {
		zkrtest.CheckConstructor(t, ErrInvalid, c, func(c *framework.Client, p string) error {
			v, err := NewValue(c, p, nil)
			require.Nil(t, v)
			return err
		})
		zkrtest.CheckConstructor(t, ErrInvalid, c, func(c *framework.Client, p string) error {
			n, err := NewCount(c, p, 0)
			require.Nil(t, n)
			return err
		})
	})

	t.Run("a count node that is not 4 bytes", func(t *testing.T) {
		for _, data := range [][]byte{nil, {1, 2, 3}, {0, 0, 0, 0, 1}} {
			_, err := c.Create(ctx, "/not-a-count", data)
			require.NoError(t, err)
			n := newCount(t, c, "/not-a-count", 0)
			err = n.Start(ctx)
			require.ErrorIs(t, err, ErrBadData)
			require.ErrorContains(t, err, "/not-a-count")
			require.ErrorIs(t, n.Set(ctx, 1), ErrClosed, "the count closed")
			got, _, err := c.Get(ctx, "/not-a-count")
			require.NoError(t, err)
			require.Equal(t, len(data), len(got), "left as it was")
			require.NoError(t, c.Delete(ctx, "/not-a-count", -1))
		}
	})

	t.Run("lifecycle", func(t *testing.T) {
		n := newCount(t, c, "/lifecycle", 0)
		require.ErrorIs(t, n.Set(ctx, 1), ErrNotStarted)
		_, err := n.TrySet(ctx, n.Get(), 1)
		require.ErrorIs(t, err, ErrNotStarted)
		require.NoError(t, n.Start(ctx))
		require.ErrorIs(t, n.Start(ctx), ErrStarted)
		_, err = n.TrySet(ctx, Versioned[int32]{Value: 0, Version: -1}, 1)
		require.ErrorIs(t, err, ErrInvalid, "version -1 would match any")
		require.NoError(t, n.Close(context.Background()))
		require.NoError(t, n.Close(context.Background()), "Close is idempotent")
		require.ErrorIs(t, n.Set(ctx, 1), ErrClosed)
		require.ErrorIs(t, n.Start(ctx), ErrClosed)
		called := false
		n.Listen(func(Versioned[int32]) { called = true })()
		require.False(t, called)
	})

	t.Run("too large", func(t *testing.T) {
		v, err := NewValue(c, "/large", nil)
		require.NoError(t, err)
		defer v.Close(context.Background())
		require.NoError(t, v.Start(ctx))
		require.ErrorIs(t, v.Set(ctx, make([]byte, c.ForRecipes().MaxDataSize())), framework.ErrDataTooLarge)
		require.Equal(t, framework.Connected, c.State(), "refused before sending, the connection kept")
	})

	t.Run("closed client", func(t *testing.T) {
		n := newCount(t, zkrtest.Closed(t, []string{srv.Addr()}), "/closed", 0)
		require.ErrorIs(t, n.Start(ctx), framework.ErrClosed)
	})
}
