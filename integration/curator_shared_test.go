package integration

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/recipes/shared"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// A SharedCount set by Curator is read by Go, and one set by Go is heard by Curator:
// the same 4 bytes and the same versions on both sides.
func TestSharedCountGoAndJava(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	java := zkrtest.StartCuratorPeer(t, "sharedcount", srv.Addr(), "/interop/shared", "7")
	require.Equal(t, "COUNT 7 0", java.Expect(t, "COUNT "), "Curator made the node with its seed")

	count, err := shared.NewCount(newClient(t, []string{srv.Addr()}), "/interop/shared", 1)
	require.NoError(t, err)
	defer count.Close(context.Background())
	heard := make(chan shared.Versioned[int32], 100)
	count.Listen(func(v shared.Versioned[int32]) { heard <- v })
	require.NoError(t, count.Start(ctx))
	require.Equal(t, shared.Versioned[int32]{Value: 7, Version: 0}, count.Get(), "Go reads Curator's seed")

	awaitHeard := func(want shared.Versioned[int32]) {
		t.Helper()
		deadline := time.After(wait)
		for {
			select {
			case v := <-heard:
				if v == want {
					return
				}
			case <-deadline:
				t.Fatalf("Go did not hear %v", want)
			}
		}
	}

	java.Send(t, "set 12")
	java.Expect(t, "SET")
	awaitHeard(shared.Versioned[int32]{Value: 12, Version: 1})
	require.Equal(t, shared.Versioned[int32]{Value: 12, Version: 1}, count.Get())

	require.NoError(t, count.Set(ctx, 20))
	require.Equal(t, "COUNT 20 2", java.Expect(t, "COUNT 20"), "Curator hears Go's set")

	ok, err := count.TrySet(ctx, shared.Versioned[int32]{Value: 12, Version: 1}, 99)
	require.NoError(t, err)
	require.False(t, ok, "a stale version")
	java.Send(t, "tryset 30")
	require.Equal(t, "TRYSET true", java.Expect(t, "TRYSET "))
	awaitHeard(shared.Versioned[int32]{Value: 30, Version: 3})

	ok, err = count.TrySet(ctx, count.Get(), 31)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "COUNT 31 4", java.Expect(t, "COUNT 31"))
}
