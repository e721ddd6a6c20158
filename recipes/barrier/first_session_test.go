package barrier

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

// returns runs call with a context that never ends and hands back its error; a
// call that has not returned after wait fails the test (closing c releases it).
func returns(t *testing.T, c *framework.Client, what string, call func(context.Context) error) error {
	t.Helper()
	done := run(context.Background(), call)
	select {
	case err := <-done:
		return err
	case <-time.After(wait):
		_ = c.Close()
		<-done
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
	eventually(t, func() bool { return c.State() == framework.Connected }, "connected")
}

// Before its client's first session, Wait ends as the client's operations do: with
// nothing listening at the address and a context that never ends, after one
// connection timeout, with a *framework.ConnectError wrapping framework.ErrNoServer.
// Once the server is up, Wait works.
func TestWaitBeforeAFirstSession(t *testing.T) {
	srv, c := beforeFirstSession(t)
	b, err := New(c, "/barriers/first")
	require.NoError(t, err)
	gaveUp(t, returns(t, c, "Wait", b.Wait), "barrier: waiting on /barriers/first: ")

	serverBack(t, srv, c)
	require.NoError(t, b.Wait(testCtx(t)), "not set: Wait returns at once")
}

// Before its client's first session, Enter ends as Wait does, with no node left
// and the member outside: once the server is up, Enter may be called again.
func TestEnterBeforeAFirstSession(t *testing.T) {
	srv, c := beforeFirstSession(t)
	d := newDouble(t, c, "/doubles/first", 1)
	gaveUp(t, returns(t, c, "Enter", d.Enter), "barrier: entering /doubles/first: ")

	serverBack(t, srv, c)
	ctx := testCtx(t)
	require.NoError(t, d.Enter(ctx), "Enter may be called again")
	require.Len(t, children(t, c, "/doubles/first"), 2, "our node and the ready node")
	require.NoError(t, d.Leave(ctx))
	require.Empty(t, children(t, c, "/doubles/first"))
}
