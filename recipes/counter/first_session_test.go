package counter

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

// Before its client's first session, Set ends after one connection timeout with a
// *framework.ConnectError wrapping framework.ErrNoServer, and does not call it an
// unknown outcome: nothing was sent. Once the server is up, Set writes.
func TestSetBeforeAFirstSessionIsNotUnknown(t *testing.T) {
	srv, c := zkrtest.BeforeAFirstSession(t)
	n := newCounter(t, c, "/counters/first")

	err := zkrtest.GivesUp(t, c, "counter: set /counters/first to 7: ", func(ctx context.Context) error { return n.Set(ctx, 7) })
	require.NotErrorIs(t, err, ErrUnknownOutcome, "nothing was sent: %v", err)

	zkrtest.ServerBack(t, srv, c)
	ctx := testCtx(t)
	require.NoError(t, n.Set(ctx, 7))
	v, err := n.Get(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(7), v)
}
