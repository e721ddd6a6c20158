package multilock

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

// A multi-lock's acquisition is measured as the acquisitions of its locks.
func TestMetricsAreThoseOfItsLocks(t *testing.T) {
	srv := zkrtest.Server(t)
	tm := zkrtest.NewTelemetry(t)
	ctx := testCtx(t)
	c := zkrtest.Client(t, []string{srv.Addr()}, tm.Options...)
	m, err := NewMutexes(c, []string{"/locks/b", "/locks/a"})
	require.NoError(t, err)
	require.NoError(t, m.Acquire(ctx))
	require.NoError(t, m.Release(ctx))

	require.Equal(t, int64(2), tm.Count(t, "zkrecipes.lock.wait.duration", "recipe", "mutex", "outcome", "acquired"))
	require.Equal(t, int64(2), tm.Count(t, "zkrecipes.lock.hold.duration", "recipe", "mutex"))
	var paths []string
	for _, s := range tm.Spans() {
		paths = append(paths, zkrtest.SpanAttributes(s)["path"])
	}
	require.Equal(t, []string{"/locks/a", "/locks/b"}, paths, "one span per lock, in order")
	tm.RequireBoundedAttributes(t)
}
