package counter

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// Before its client's first session, Set ends after one connection timeout with a
// *framework.ConnectError wrapping framework.ErrNoServer, and does not call it an
// unknown outcome: nothing was sent. Once the server is up, Set writes.
func TestSetBeforeAFirstSessionIsNotUnknown(t *testing.T) {
	srv := zktest.NewServer(t)
	srv.Stop() // nothing listens at its address until it starts again
	c, err := framework.New([]string{srv.Addr()}, framework.WithConnectionTimeout(5*time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	n := newCounter(t, c, "/counters/first")

	res := make(chan error, 1)
	go func() { res <- n.Set(context.Background(), 7) }()
	select {
	case err = <-res:
	case <-time.After(wait):
		_ = c.Close() // releases Set
		<-res
		require.FailNow(t, "Set did not return")
	}
	var ce *framework.ConnectError
	require.ErrorAs(t, err, &ce)
	require.ErrorIs(t, err, framework.ErrNoServer, "the connection timeout ended the wait: %v", err)
	require.ErrorIs(t, err, syscall.ECONNREFUSED, "the last attempt's cause is in the chain")
	require.NotErrorIs(t, err, ErrUnknownOutcome, "nothing was sent: %v", err)
	require.ErrorContains(t, err, "counter: set /counters/first to 7: ")

	require.NoError(t, srv.Start())
	require.Eventually(t, func() bool { return c.State() == framework.Connected }, wait, 10*time.Millisecond)
	ctx := testCtx(t)
	require.NoError(t, n.Set(ctx, 7))
	v, err := n.Get(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(7), v)
}
