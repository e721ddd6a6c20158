package partition

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

// Before its client's first session, Start ends as the client's operations do: with
// nothing listening at the address and a context that never ends, after one
// connection timeout, with a *framework.ConnectError wrapping framework.ErrNoServer,
// leaving nothing behind (goleak sees no member and no loop). A failed Start closes
// the Partitioner; once the server is up, a new one starts on the same client.
func TestStartBeforeAFirstSession(t *testing.T) {
	srv, c := zkrtest.BeforeAFirstSession(t)
	r := newRegisters(t)
	p, err := New(c, "/first", r.work("a"), WithID("a"), Items("x"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close(context.Background()) })

	zkrtest.GivesUp(t, c, "partition: starting /first: ", p.Start)
	require.ErrorIs(t, p.Start(context.Background()), ErrClosed, "a failed Start closes the Partitioner")

	zkrtest.ServerBack(t, srv, c)
	again := start(t, c, "/first", "a", r, Items("x"))
	require.Eventually(t, func() bool { return slices.Equal(again.Owned(), []string{"x"}) }, wait, 10*time.Millisecond,
		"the one member owns the one item")
}
