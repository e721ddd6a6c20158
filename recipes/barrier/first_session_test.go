package barrier

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

// Before its client's first session, Wait ends as the client's operations do: with
// nothing listening at the address and a context that never ends, after one
// connection timeout, with a *framework.ConnectError wrapping framework.ErrNoServer.
// Once the server is up, Wait works.
func TestWaitBeforeAFirstSession(t *testing.T) {
	srv, c := zkrtest.BeforeAFirstSession(t)
	b, err := New(c, "/barriers/first")
	require.NoError(t, err)
	zkrtest.GivesUp(t, c, "barrier: waiting on /barriers/first: ", b.Wait)

	zkrtest.ServerBack(t, srv, c)
	require.NoError(t, b.Wait(testCtx(t)), "not set: Wait returns at once")
}

// Before its client's first session, Enter ends as Wait does, with no node left
// and the member outside: once the server is up, Enter may be called again.
func TestEnterBeforeAFirstSession(t *testing.T) {
	srv, c := zkrtest.BeforeAFirstSession(t)
	d := newDouble(t, c, "/doubles/first", 1)
	zkrtest.GivesUp(t, c, "barrier: entering /doubles/first: ", d.Enter)

	zkrtest.ServerBack(t, srv, c)
	ctx := testCtx(t)
	require.NoError(t, d.Enter(ctx), "Enter may be called again")
	require.Len(t, children(t, c, "/doubles/first"), 2, "our node and the ready node")
	require.NoError(t, d.Leave(ctx))
	require.Empty(t, children(t, c, "/doubles/first"))
}
