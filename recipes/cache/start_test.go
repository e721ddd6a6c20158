package cache

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// Before its client's first session, Start ends as the client's operations do: with
// nothing listening at the address and a context that never ends, after one
// connection timeout, with a *framework.ConnectError wrapping framework.ErrNoServer. The
// cache is left as it was before Start: once the server is up, Start loads it.
func TestStartBeforeAFirstSessionEndsWithinOneConnectionTimeout(t *testing.T) {
	srv := zktest.NewServer(t)
	create(t, newClient(t, []string{srv.Addr()}), "/app", "root")
	srv.Stop() // nothing listens at its address until it starts again
	c, err := framework.New([]string{srv.Addr()}, framework.WithConnectionTimeout(5*time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	ca, err := New(c, "/app")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ca.Close(context.Background()) })
	h := record(ca)

	res := make(chan error, 1)
	go func() { res <- ca.Start(context.Background()) }()
	select {
	case err = <-res:
	case <-time.After(wait):
		_ = c.Close() // releases Start
		<-res
		require.FailNow(t, "Start did not return")
	}
	var ce *framework.ConnectError
	require.ErrorAs(t, err, &ce)
	require.ErrorIs(t, err, framework.ErrNoServer, "the connection timeout ended the wait: %v", err)
	require.ErrorIs(t, err, syscall.ECONNREFUSED, "the last attempt's cause is in the chain")
	require.ErrorContains(t, err, "cache: start /app: ")
	require.Empty(t, h.get(), "nothing loaded, nothing told")

	require.NoError(t, srv.Start())
	require.Eventually(t, func() bool { return c.State() == framework.Connected }, wait, 10*time.Millisecond)
	require.NoError(t, ca.Start(testCtx(t)), "Start may be tried again")
	h.waitEvents(t, 0, "Created /app", "Initialized")
}
