package partition

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

// An item's lock has the mutex's node names, so Apache Curator's InterProcessMutex
// on the item's path (through the peer, adding 1 to a counter under it) waits while
// the item's owner runs it, and gets through once the owner has handed it over.
func TestCuratorMutexWaitsForTheOwner(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	_, err := c.Create(ctx, "/counted", []byte("0"))
	require.NoError(t, err)
	counted := func() string {
		data, _, err := c.Get(context.WithoutCancel(ctx), "/counted")
		if err != nil {
			return err.Error()
		}
		return string(data)
	}

	r := newRegisters(t)
	seenAtEnd := make(chan string, 1)
	a, err := New(newClient(t, []string{srv.Addr()}), "/curator", func(ctx context.Context, it Item) error {
		r.enter("a", it)
		defer r.leave("a", it)
		<-ctx.Done()
		seenAtEnd <- counted() // still under our hold: Curator must not have counted
		return nil
	}, WithID("a"), Items("x"))
	require.NoError(t, err)
	require.NoError(t, a.Start(ctx))
	t.Cleanup(func() { _ = a.Close(context.Background()) })
	require.Eventually(t, func() bool { return slices.Equal(a.Owned(), []string{"x"}) }, wait, 10*time.Millisecond)

	java := zkrtest.StartCuratorPeer(t, "count", srv.Addr(), "/curator/items/x", "/counted", "1")
	require.Eventually(t, func() bool {
		names, err := zkrtest.List(c, "/curator/items/x")
		return err == nil && len(names) == 2
	}, wait, 10*time.Millisecond, "Curator queues behind the owner")
	require.Equal(t, "0", counted(), "Curator counted while the owner ran the item")

	require.NoError(t, a.Close(ctx)) // the work returns, then the item is released
	require.Equal(t, "0", <-seenAtEnd, "Curator counted before the owner's work returned")
	java.Expect(t, "DONE")
	require.Equal(t, "1", counted())
}
