package lifecycle

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zkrecipes/zkrecipes/framework"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestTransitions(t *testing.T) {
	started, closed := Errors("x")
	require.EqualError(t, started, "x: already started")
	require.EqualError(t, closed, "x: closed")
	require.ErrorIs(t, closed, ErrClosed)
	require.ErrorIs(t, started, ErrStarted)

	var l Lifecycle
	require.Equal(t, Latent, l.State())
	require.NoError(t, l.Start(started, closed))
	require.Equal(t, Started, l.State())
	require.ErrorIs(t, l.Start(started, closed), started)
	require.True(t, l.Unstart())
	require.False(t, l.Unstart(), "only a started lifecycle goes back")
	require.NoError(t, l.Start(started, closed))
	require.Equal(t, Started, l.Close())
	require.Equal(t, Closed, l.Close(), "a second Close")
	require.ErrorIs(t, l.Start(started, closed), closed)
	require.False(t, l.Unstart())
	require.False(t, errors.Is(closed, started))
}

// A recipe's context, its hook and ClientClosed all hear the client's close, and say
// framework.ErrClosed; a recipe's own cancel is not taken for it.
func TestClientClose(t *testing.T) {
	c, err := framework.New([]string{"127.0.0.1:1"}) // never reached: no server needed
	require.NoError(t, err)
	own, cancelOwn := Context(c)
	cancelOwn()
	require.NotErrorIs(t, context.Cause(own), framework.ErrClosed)
	ctx, cancel := Context(c)
	defer cancel()
	heard := make(chan struct{})
	OnClientClose(c, func() { close(heard) })
	require.NoError(t, ClientClosed(c, "x: start /a"))

	require.NoError(t, c.Close())
	<-ctx.Done()
	require.ErrorIs(t, context.Cause(ctx), framework.ErrClosed)
	<-heard
	err = ClientClosed(c, "x: start /a")
	require.ErrorIs(t, err, framework.ErrClosed)
	require.EqualError(t, err, "x: start /a: framework: client closed")
}
