package lifecycle

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
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
