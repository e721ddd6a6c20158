package shared

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

func newCount(t *testing.T, c *framework.Client, path string, seed int32) *Count {
	t.Helper()
	n, err := NewCount(c, path, seed)
	require.NoError(t, err)
	t.Cleanup(func() { _ = n.Close(context.Background()) })
	return n
}

func TestCountFollowsTheNode(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	a := newCount(t, newClient(t, []string{srv.Addr()}), "/app/shared/workers", 3)
	b := newCount(t, newClient(t, []string{srv.Addr()}), "/app/shared/workers", 99)
	require.Equal(t, Versioned[int32]{Value: 3, Version: -1}, a.Get(), "the seed before Start")
	var bHeard heard[int32]
	b.Listen(bHeard.add)

	require.NoError(t, a.Start(ctx))
	require.NoError(t, b.Start(ctx))
	require.Equal(t, Versioned[int32]{Value: 3, Version: 0}, a.Get())
	require.Equal(t, Versioned[int32]{Value: 3, Version: 0}, b.Get(), "the first to start made the node with its seed")

	// Curator's layout: 4 bytes, big-endian.
	data, _, err := newClient(t, []string{srv.Addr()}).Get(ctx, "/app/shared/workers")
	require.NoError(t, err)
	require.Equal(t, []byte{0, 0, 0, 3}, data)

	require.NoError(t, a.Set(ctx, 5))
	require.Equal(t, Versioned[int32]{Value: 5, Version: 1}, a.Get(), "the writer sees its write at once")
	require.Eventually(t, func() bool { return b.Get() == Versioned[int32]{Value: 5, Version: 1} }, wait, 5*time.Millisecond)
	require.Eventually(t, func() bool { v, _ := bHeard.last(); return v == Versioned[int32]{Value: 5, Version: 1} }, wait, 5*time.Millisecond)

	// TrySet from the version held wins; from a stale one it changes nothing.
	stale := b.Get()
	ok, err := b.TrySet(ctx, stale, 6)
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = a.TrySet(ctx, stale, 7)
	require.NoError(t, err)
	require.False(t, ok, "version 1 is stale")
	data, stat, err := newClient(t, []string{srv.Addr()}).Get(ctx, "/app/shared/workers")
	require.NoError(t, err)
	require.Equal(t, []byte{0, 0, 0, 6}, data, "the stale TrySet changed nothing")
	require.EqualValues(t, 2, stat.Version)
	require.Eventually(t, func() bool { return a.Get() == Versioned[int32]{Value: 6, Version: 2} }, wait, 5*time.Millisecond)
}

func TestValue(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	v, err := NewValue(newClient(t, []string{srv.Addr()}), "/config/mode", []byte("seed"))
	require.NoError(t, err)
	defer v.Close(context.Background())
	require.NoError(t, v.Start(ctx))
	got := v.Get()
	require.Equal(t, "seed", string(got.Value))
	got.Value[0] = 'X' // the caller's copy
	require.Equal(t, "seed", string(v.Get().Value))
	ok, err := v.TrySet(ctx, v.Get(), []byte("fast"))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, Versioned[[]byte]{Value: []byte("fast"), Version: 1}, v.Get())
}

// Many writers set at once, from several clients: each listener hears versions only
// ever growing, and ends on the node's final value.
func TestEverySetIsHeardInTheEnd(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	const writers, sets = 4, 20
	var counts []*Count
	var heards []*heard[int32]
	for range writers {
		n := newCount(t, newClient(t, []string{srv.Addr()}), "/everyone", 0)
		h := &heard[int32]{}
		n.Listen(h.add)
		require.NoError(t, n.Start(ctx))
		counts, heards = append(counts, n), append(heards, h)
	}
	var wg sync.WaitGroup
	for i, n := range counts {
		wg.Go(func() {
			for j := range sets {
				assert.NoError(t, n.Set(ctx, int32(100*i+j)))
			}
		})
	}
	wg.Wait()
	final := finalCount(t, srv.Addr(), "/everyone")
	require.EqualValues(t, writers*sets, final.Version)
	for i, h := range heards {
		require.Eventually(t, func() bool { v, _ := h.last(); return v == final }, wait, 5*time.Millisecond, "listener %d", i)
		requireGrowing(t, h.all())
		require.Equal(t, final, counts[i].Get())
	}
}

// finalCount reads the node directly.
func finalCount(t *testing.T, addr, path string) Versioned[int32] {
	t.Helper()
	data, stat, err := newClient(t, []string{addr}).Get(testCtx(t), path)
	require.NoError(t, err)
	require.Len(t, data, 4)
	return Versioned[int32]{Value: int32(binary.BigEndian.Uint32(data)), Version: stat.Version}
}

func requireGrowing[T any](t *testing.T, seen []Versioned[T]) {
	t.Helper()
	for i := 1; i < len(seen); i++ {
		require.Greater(t, seen[i].Version, seen[i-1].Version, "heard %v", fmt.Sprint(seen))
	}
}
