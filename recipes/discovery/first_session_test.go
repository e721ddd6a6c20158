package discovery

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// beforeFirstSession is a client made while its server is down, with a connection
// timeout of 5 s: srv.Start brings the server back.
func beforeFirstSession(t *testing.T) (*zktest.Server, *framework.Client) {
	t.Helper()
	srv := zktest.NewServer(t)
	srv.Stop() // nothing listens at its address until it starts again
	c, err := framework.New([]string{srv.Addr()}, framework.WithConnectionTimeout(5*time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return srv, c
}

// returns runs call on a goroutine of its own and hands back its error; a call that
// has not returned after wait fails the test (closing c releases it).
func returns(t *testing.T, c *framework.Client, what string, call func() error) error {
	t.Helper()
	res := make(chan error, 1)
	go func() { res <- call() }()
	select {
	case err := <-res:
		return err
	case <-time.After(wait):
		_ = c.Close()
		<-res
		require.FailNow(t, what+" did not return")
		return nil
	}
}

// gaveUp checks that err is the client's give-up before its first session.
func gaveUp(t *testing.T, err error, prefix string) {
	t.Helper()
	var ce *framework.ConnectError
	require.ErrorAs(t, err, &ce)
	require.ErrorIs(t, err, framework.ErrNoServer, "the connection timeout ended the wait: %v", err)
	require.ErrorIs(t, err, syscall.ECONNREFUSED, "the last attempt's cause is in the chain")
	require.ErrorContains(t, err, prefix)
}

// serverBack starts srv again and waits for c's first session.
func serverBack(t *testing.T, srv *zktest.Server, c *framework.Client) {
	t.Helper()
	require.NoError(t, srv.Start())
	require.Eventually(t, func() bool { return c.State() == framework.Connected }, wait, 10*time.Millisecond)
}

// Before its client's first session, Register ends as the client's operations do:
// with a context that never ends, after one connection timeout, with a
// *framework.ConnectError wrapping framework.ErrNoServer, and nothing left behind;
// once the server is up, Register again registers.
func TestRegisterBeforeAFirstSession(t *testing.T) {
	srv, c := beforeFirstSession(t)
	d := newDiscovery(t, c)
	in := Instance{Name: "orders", ID: "go-1"}
	err := returns(t, c, "Register", func() error {
		r, err := d.Register(context.Background(), in)
		if err == nil {
			_ = r.Close(context.Background())
		}
		return err
	})
	gaveUp(t, err, "discovery: register /services/orders/go-1: ")

	serverBack(t, srv, c)
	register(t, d, in)
	got, err := d.Instance(testCtx(t), "orders", "go-1")
	require.NoError(t, err)
	require.Equal(t, "go-1", got.ID)
}

// Before its client's first session, a provider's Start ends as the cache's does,
// and leaves the provider as it was before Start: once the server is up, Start
// again loads and follows the service (not ErrStarted).
func TestProviderStartBeforeAFirstSession(t *testing.T) {
	srv, c := beforeFirstSession(t)
	d := newDiscovery(t, c)
	p, err := d.NewProvider("orders")
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	err = returns(t, c, "Start", func() error { return p.Start(context.Background()) })
	gaveUp(t, err, "discovery: provider of /services/orders: ")

	serverBack(t, srv, c)
	require.NoError(t, p.Start(testCtx(t)), "Start may be tried again")
	register(t, d, Instance{Name: "orders", ID: "go-1"})
	sees(t, p, "go-1")
	require.ErrorIs(t, p.Start(testCtx(t)), ErrStarted)
}
