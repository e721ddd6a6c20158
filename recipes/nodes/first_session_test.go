package nodes

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

// Before its client's first session, Start ends as the client's operations do: with
// nothing listening at the address and a context that never ends, after one
// connection timeout, with a *framework.ConnectError wrapping framework.ErrNoServer.
// It leaves nothing behind (goleak sees the keeper gone), and may be tried again:
// once the server is up, the node is made.
func TestStartBeforeAFirstSession(t *testing.T) {
	srv, c := zkrtest.BeforeAFirstSession(t)
	p := newNode(t, c, "/first/node", []byte("v1"), Ephemeral())

	zkrtest.GivesUp(t, c, "nodes: starting /first/node: ", p.Start)
	require.Empty(t, p.Path(), "nothing made")

	zkrtest.ServerBack(t, srv, c)
	require.NoError(t, p.Start(testCtx(t)), "Start may be tried again")
	nodeIs(t, c, "/first/node", "v1", c.SessionID)
}
