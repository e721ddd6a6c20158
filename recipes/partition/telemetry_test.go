package partition

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

const (
	ownershipChanges = "zkrecipes.partition.ownership_changes"
	itemsOwned       = "zkrecipes.partition.items_owned"
)

// A member takes three items, hands some to a member that joins, and releases the
// rest at Close: the items it owns now and its changes are counted as they happen.
func TestOwnershipMetrics(t *testing.T) {
	srv := zkrtest.Server(t)
	tm := zkrtest.NewTelemetry(t)
	ctx := testCtx(t)
	r := newRegisters(t)
	items := []string{"x", "y", "z"}
	a := start(t, newClient(t, []string{srv.Addr()}, tm.Options...), "/measured", "a", r, Items(items...))
	settled(t, r, items, map[string]*Partitioner{"a": a})
	require.Equal(t, int64(3), tm.Sum(t, ownershipChanges, "recipe", "partition", "change", "acquired"))
	require.Equal(t, int64(3), tm.Sum(t, itemsOwned, "recipe", "partition"))

	b := start(t, newClient(t, []string{srv.Addr()}), "/measured", "b", r, Items(items...))
	settled(t, r, items, map[string]*Partitioner{"a": a, "b": b})
	kept := int64(len(a.Owned()))
	require.Eventually(t, func() bool { return tm.Sum(t, itemsOwned) == kept }, wait, 5*time.Millisecond)
	require.Equal(t, 3-kept, tm.Sum(t, ownershipChanges, "change", "released"), "handed over")

	require.NoError(t, a.Close(ctx))
	require.Eventually(t, func() bool { return tm.Sum(t, itemsOwned) == 0 }, wait, 5*time.Millisecond)
	require.Equal(t, int64(3), tm.Sum(t, ownershipChanges, "change", "released"))
	require.Equal(t, int64(3), tm.Sum(t, ownershipChanges, "change", "acquired"), "a took nothing again")
	require.Zero(t, tm.Sum(t, ownershipChanges, "change", "lost"))
	tm.RequireBoundedAttributes(t)
}

// An item whose lock goes with an expired session is counted lost, and acquired
// again in the new session.
func TestLostOwnershipMetrics(t *testing.T) {
	srv := zkrtest.Server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	tm := zkrtest.NewTelemetry(t)
	ctx := testCtx(t)
	r := newRegisters(t)
	c := newClient(t, []string{proxy.Addr()}, append(tm.Options, framework.WithSessionTimeout(2*time.Second))...)
	a := start(t, c, "/lost", "a", r, Items("x"))
	settled(t, r, []string{"x"}, map[string]*Partitioner{"a": a})
	require.NoError(t, proxy.ExpireSession(ctx, 2*time.Second))
	require.Eventually(t, func() bool { return tm.Sum(t, ownershipChanges, "change", "acquired") == 2 }, wait, 5*time.Millisecond)
	require.Equal(t, int64(1), tm.Sum(t, ownershipChanges, "change", "lost"))
	require.Zero(t, tm.Sum(t, ownershipChanges, "change", "released"))
	require.Equal(t, int64(1), tm.Sum(t, itemsOwned))
	tm.RequireBoundedAttributes(t)
}
