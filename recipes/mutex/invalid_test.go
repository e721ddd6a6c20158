package mutex

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
	const node = "/locks/_c_0f8fad5b-d9cb-469f-a165-70867728950e-lock-0000000000"
	srv := zkrtest.Server(t)
	c := newClient(t, []string{srv.Addr()})
	ctx := testCtx(t)

	t.Run("New", func(t *testing.T) {
		zkrtest.CheckConstructor(t, ErrInvalid, c, func(c *framework.Client, p string) error {
			m, err := New(c, p)
			require.Nil(t, m)
			return err
		})
		_, err := New(c, "/l", WithID("x"), nil)
		require.ErrorIs(t, err, ErrInvalid)
		require.ErrorContains(t, err, "nil Option")
	})

	t.Run("Revoke", func(t *testing.T) {
		require.ErrorIs(t, Revoke(ctx, nil, node), ErrInvalid)
		for _, p := range zkrtest.BadPaths {
			require.ErrorIs(t, Revoke(ctx, c, p), ErrInvalid, "%q", p)
		}
		// Not a participant: the message would overwrite some other node's data.
		_, err := c.Create(ctx, "/config", []byte("precious"))
		require.NoError(t, err)
		for _, p := range []string{"/config", "/locks", "/locks/lock-7", "/zookeeper/x", "/locks/_c_0f8fad5b-d9cb-469f-a165-70867728950e-latch-0000000000"} {
			err := Revoke(ctx, c, p)
			require.ErrorIs(t, err, ErrInvalid, "%q", p)
			require.ErrorContains(t, err, "not a lock participant")
		}
		data, _, err := c.Get(ctx, "/config")
		require.NoError(t, err)
		require.Equal(t, "precious", string(data))
		err = Revoke(ctx, c, node)
		require.ErrorIs(t, err, framework.ErrNoNode)
		require.ErrorContains(t, err, "no such participant")
	})

	t.Run("release what is not held", func(t *testing.T) {
		m := newMutex(t, c, "/locks/release")
		require.ErrorIs(t, m.Release(ctx), ErrNotHeld)
		require.NoError(t, m.Acquire(ctx))
		require.NoError(t, m.Release(ctx))
		require.ErrorIs(t, m.Release(ctx), ErrNotHeld, "a second Release")
		require.False(t, m.IsAcquired())
		require.Zero(t, m.FencingToken())
		require.Empty(t, m.Node())
		select {
		case <-m.Lost():
		default:
			t.Fatal("Lost of a value that holds nothing is closed")
		}
	})

	t.Run("an ended context", func(t *testing.T) {
		ended, cancel := context.WithCancel(ctx)
		cancel()
		m := newMutex(t, c, "/locks/ended")
		require.ErrorIs(t, m.Acquire(ended), context.Canceled)
		ok, err := m.TryAcquire(ended)
		require.False(t, ok)
		require.ErrorIs(t, err, context.Canceled)
		require.Empty(t, children(t, c, "/locks/ended"), "nothing was sent")
	})

	t.Run("paths the server refuses", func(t *testing.T) {
		// Valid paths, but no lock can live there: the error comes at once.
		m := newMutex(t, c, "/zookeeper/lock")
		err := m.Acquire(ctx)
		require.ErrorIs(t, err, framework.ErrInvalidPath)
		require.ErrorContains(t, err, "reserved")
		_, err = c.Create(ctx, "/ephemeral", nil, framework.Ephemeral())
		require.NoError(t, err)
		m = newMutex(t, c, "/ephemeral/lock")
		require.ErrorIs(t, m.Acquire(ctx), framework.ErrNoChildrenForEphemerals)
		require.Empty(t, children(t, c, "/ephemeral"))
	})

	t.Run("a closed client", func(t *testing.T) {
		closed := zkrtest.Closed(t, []string{srv.Addr()})
		m := newMutex(t, closed, "/locks/closed")
		// No deadline: a hang would fail the test by its timeout.
		require.ErrorIs(t, m.Acquire(context.Background()), framework.ErrClosed)
		_, err := m.TryAcquire(context.Background())
		require.ErrorIs(t, err, framework.ErrClosed)
		_, err = m.Participants(context.Background())
		require.ErrorIs(t, err, framework.ErrClosed)
		require.ErrorIs(t, m.Release(context.Background()), ErrNotHeld)
		require.ErrorIs(t, Revoke(context.Background(), closed, node), framework.ErrClosed)
	})
}

// Each option refuses a bad value at New, naming itself; so does a nil Option.
func TestBadOptions(t *testing.T) {
	c := zkrtest.Offline(t)
	zkrtest.CheckOptions(t, ErrInvalid, func(opts ...Option) error {
		m, err := New(c, "/l", opts...)
		require.Nil(t, m)
		return err
	}, []zkrtest.BadOption[Option]{
		{Opts: []Option{WithID("")}, Says: "WithID: empty id"},
		{Opts: []Option{WithRevocationListener(nil)}, Says: "WithRevocationListener: nil listener"},
		{Opts: []Option{WithID("x"), nil}, Says: "nil Option (option 2 of 2)"},
	})
	m, err := New(c, "/l", WithID("x"), WithRevocationListener(func() {}))
	require.NoError(t, err)
	require.NotNil(t, m)
}
