package cache

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

// Before its client's first session, Start ends as the client's operations do: with
// nothing listening at the address and a context that never ends, after one
// connection timeout, with a *framework.ConnectError wrapping framework.ErrNoServer. The
// cache is left as it was before Start: once the server is up, Start loads it.
func TestStartBeforeAFirstSessionEndsWithinOneConnectionTimeout(t *testing.T) {
	srv, c := zkrtest.BeforeAFirstSession(t)
	ca, err := New(c, "/app")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ca.Close(context.Background()) })
	h := record(ca)

	zkrtest.GivesUp(t, c, "cache: start /app: ", ca.Start)
	require.Empty(t, h.get(), "nothing loaded, nothing told")

	zkrtest.ServerBack(t, srv, c)
	create(t, c, "/app", "root")
	require.NoError(t, ca.Start(testCtx(t)), "Start may be tried again")
	h.waitEvents(t, 0, "Created /app", "Initialized")
}
