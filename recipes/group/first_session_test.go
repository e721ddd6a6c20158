package group

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
// connection timeout, with a *framework.ConnectError wrapping framework.ErrNoServer,
// leaving nothing behind (goleak sees no keeper and no cache). A failed Start closes
// the Member; once the server is up, a new one joins on the same client.
func TestStartBeforeAFirstSession(t *testing.T) {
	srv := zktest.NewServer(t)
	srv.Stop() // nothing listens at its address until it starts again
	c, err := framework.New([]string{srv.Addr()}, framework.WithConnectionTimeout(5*time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	m, err := New(c, "/first", "a", []byte("pa"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close(context.Background()) })

	res := make(chan error, 1)
	go func() { res <- m.Start(context.Background()) }()
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
	require.ErrorContains(t, err, "group: joining /first: ")
	require.ErrorIs(t, m.Start(context.Background()), ErrClosed, "a failed Start closes the Member")

	require.NoError(t, srv.Start())
	require.Eventually(t, func() bool { return c.State() == framework.Connected }, wait, 10*time.Millisecond)
	again := join(t, c, "/first", "a", "pa")
	sees(t, again, map[string]string{"a": "pa"})
	require.Equal(t, []string{"a"}, children(t, c, "/first"))
}
