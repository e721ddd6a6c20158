package nodes

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

// A Java PersistentNode's node is another client's: Go neither takes it over nor
// overwrites it, and says whose it is.
func TestCuratorsPersistentNode(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	java := zkrtest.StartCuratorPeer(t, "persistent", srv.Addr(), "/interop/node", "java")
	require.Equal(t, "/interop/node", strings.TrimPrefix(java.Expect(t, "CREATED "), "CREATED "))
	data, stat, err := c.Get(ctx, "/interop/node")
	require.NoError(t, err)
	require.Equal(t, "java", string(data))
	require.NotZero(t, stat.EphemeralOwner)

	p := newNode(t, c, "/interop/node", []byte("go"))
	err = p.Start(ctx)
	require.ErrorIs(t, err, ErrNodeExists)
	require.ErrorContains(t, err, fmt.Sprintf("session %#x", stat.EphemeralOwner))
	data, _, err = c.Get(ctx, "/interop/node")
	require.NoError(t, err)
	require.Equal(t, "java", string(data), "not overwritten")

	java.Send(t, "release")
	java.Expect(t, "RELEASED")
	require.NoError(t, p.Start(ctx), "free once the Java node is gone")
	nodeIs(t, c, "/interop/node", "go", c.SessionID)
}
