package partition

import (
	"context"
	"slices"
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
// leaving nothing behind (goleak sees no member and no loop). A failed Start closes
// the Partitioner; once the server is up, a new one starts on the same client.
func TestStartBeforeAFirstSession(t *testing.T) {
	srv := zktest.NewServer(t)
	srv.Stop() // nothing listens at its address until it starts again
	c, err := framework.New([]string{srv.Addr()}, framework.WithConnectionTimeout(5*time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	r := newRegisters(t)
	p, err := New(c, "/first", r.work("a"), WithID("a"), Items("x"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close(context.Background()) })

	res := make(chan error, 1)
	go func() { res <- p.Start(context.Background()) }()
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
	require.ErrorContains(t, err, "partition: starting /first: ")
	require.ErrorIs(t, p.Start(context.Background()), ErrClosed, "a failed Start closes the Partitioner")

	require.NoError(t, srv.Start())
	require.Eventually(t, func() bool { return c.State() == framework.Connected }, wait, 10*time.Millisecond)
	again := start(t, c, "/first", "a", r, Items("x"))
	require.Eventually(t, func() bool { return slices.Equal(again.Owned(), []string{"x"}) }, wait, 10*time.Millisecond,
		"the one member owns the one item")
}
