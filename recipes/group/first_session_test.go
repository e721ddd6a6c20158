package group

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

// Before its client's first session, Start ends as the client's operations do: with
// nothing listening at the address and a context that never ends, after one
// connection timeout, with a *framework.ConnectError wrapping framework.ErrNoServer,
// leaving nothing behind (goleak sees no keeper and no cache). A failed Start closes
// the Member; once the server is up, a new one joins on the same client.
func TestStartBeforeAFirstSession(t *testing.T) {
	srv, c := zkrtest.BeforeAFirstSession(t)
	m, err := New(c, "/first", "a", []byte("pa"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close(context.Background()) })

	zkrtest.GivesUp(t, c, "group: joining /first: ", m.Start)
	require.ErrorIs(t, m.Start(context.Background()), ErrClosed, "a failed Start closes the Member")

	zkrtest.ServerBack(t, srv, c)
	again := join(t, c, "/first", "a", "pa")
	sees(t, again, map[string]string{"a": "pa"})
	require.Equal(t, []string{"a"}, children(t, c, "/first"))
}
