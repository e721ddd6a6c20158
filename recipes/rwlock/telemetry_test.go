package rwlock

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

// Each side reports under its own recipe: a downgrade is an acquisition of the read
// lock granted at once, and a writer refused while a reader holds is counted so.
func TestMetricsOfBothSides(t *testing.T) {
	srv := zkrtest.Server(t)
	tm := zkrtest.NewTelemetry(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()}, tm.Options...)
	l, other := newRW(t, c, "/locks/rw"), newRW(t, c, "/locks/rw")

	require.NoError(t, l.WriteLock().Acquire(ctx))
	require.NoError(t, l.ReadLock().Acquire(ctx)) // the downgrade
	require.NoError(t, l.WriteLock().Release(ctx))
	ok, err := other.WriteLock().TryAcquire(ctx)
	require.NoError(t, err)
	require.False(t, ok, "our reader holds")
	require.NoError(t, other.ReadLock().Acquire(ctx))
	require.NoError(t, other.ReadLock().Release(ctx))
	require.NoError(t, l.ReadLock().Release(ctx))

	const wait, hold = "zkrecipes.lock.wait.duration", "zkrecipes.lock.hold.duration"
	require.Equal(t, int64(1), tm.Count(t, wait, "recipe", "rwlock.write", "outcome", "acquired"))
	require.Equal(t, int64(1), tm.Count(t, wait, "recipe", "rwlock.write", "outcome", "refused"))
	require.Equal(t, int64(2), tm.Count(t, wait, "recipe", "rwlock.read", "outcome", "acquired"))
	require.Equal(t, int64(4), tm.Count(t, wait), "no other acquisition")
	require.Equal(t, int64(1), tm.Count(t, hold, "recipe", "rwlock.write"))
	require.Equal(t, int64(2), tm.Count(t, hold, "recipe", "rwlock.read"))
	require.Zero(t, tm.Sum(t, "zkrecipes.lock.holds_lost"))
	require.Len(t, tm.Spans(), 4)
	tm.RequireBoundedAttributes(t)
}
