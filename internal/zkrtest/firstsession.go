package zkrtest

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// BeforeAFirstSession is a client made while its server is down, with a connection
// timeout of 5 s, that has never had a session; ServerBack brings the server back.
func BeforeAFirstSession(t testing.TB) (*zktest.Server, *framework.Client) {
	t.Helper()
	srv := zktest.NewServer(t)
	srv.Stop() // nothing listens at its address until it starts again
	c, err := framework.New([]string{srv.Addr()}, framework.WithConnectionTimeout(5*time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return srv, c
}

// GivesUp runs call with a context that never ends and checks that it gives up as
// the client's operations do before a first session: an error that starts with
// prefix and wraps the client's *framework.ConnectError, framework.ErrNoServer (the
// connection timeout) and the last attempt's cause (a refused connection). A call
// that has not returned after Wait fails the test; closing c releases it.
func GivesUp(t testing.TB, c *framework.Client, prefix string, call func(context.Context) error) error {
	t.Helper()
	res := make(chan error, 1)
	go func() { res <- call(context.Background()) }()
	var err error
	select {
	case err = <-res:
	case <-time.After(Wait):
		_ = c.Close()
		<-res
		require.FailNow(t, "the call did not return", "expected: %s…", prefix)
	}
	var ce *framework.ConnectError
	require.ErrorAs(t, err, &ce)
	require.ErrorIs(t, err, framework.ErrNoServer, "the connection timeout ended the wait: %v", err)
	require.ErrorIs(t, err, syscall.ECONNREFUSED, "the last attempt's cause is in the chain")
	require.ErrorContains(t, err, prefix)
	return err
}

// ServerBack starts srv again and waits for c's first session.
func ServerBack(t testing.TB, srv *zktest.Server, c *framework.Client) {
	t.Helper()
	require.NoError(t, srv.Start())
	require.Eventually(t, func() bool { return c.State() == framework.Connected }, Wait, 10*time.Millisecond)
}
