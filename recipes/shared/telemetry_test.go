package shared

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

const writes = "zkrecipes.shared.write.duration"

// A scripted run of writes to a value and a count: each is counted once by recipe,
// operation and outcome, with a span.
func TestWriteMetrics(t *testing.T) {
	srv := zkrtest.Server(t)
	tm := zkrtest.NewTelemetry(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()}, tm.Options...)
	v, err := NewValue(c, "/shared/v", []byte("seed"))
	require.NoError(t, err)
	defer v.Close(context.Background())
	require.NoError(t, v.Start(ctx))
	first := v.Get()
	ok, err := v.TrySet(ctx, first, []byte("one")) // ok
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = v.TrySet(ctx, first, []byte("two")) // refused: the version moved on
	require.NoError(t, err)
	require.False(t, ok)
	require.NoError(t, v.Set(ctx, []byte("three"))) // ok

	n, err := NewCount(c, "/shared/n", 0)
	require.NoError(t, err)
	defer n.Close(context.Background())
	require.ErrorIs(t, n.Set(ctx, 7), ErrNotStarted) // failed
	require.NoError(t, n.Start(ctx))
	require.NoError(t, n.Set(ctx, 7)) // ok

	for _, w := range []struct {
		recipe, op, outcome string
		n                   int64
	}{
		{"shared_value", "try_set", "ok", 1}, {"shared_value", "try_set", "refused", 1},
		{"shared_value", "set", "ok", 1},
		{"shared_count", "set", "failed", 1}, {"shared_count", "set", "ok", 1},
	} {
		require.Equal(t, w.n, tm.Count(t, writes, "recipe", w.recipe, "operation", w.op, "outcome", w.outcome), "%+v", w)
	}
	require.Equal(t, int64(5), tm.Count(t, writes), "no other write")
	spans := 0
	for _, s := range tm.Spans() {
		if a := zkrtest.SpanAttributes(s); a["recipe"] == "shared_value" || a["recipe"] == "shared_count" {
			require.Contains(t, []string{"/shared/v", "/shared/n"}, a["path"])
			spans++
		}
	}
	require.Equal(t, 5, spans)
	tm.RequireBoundedAttributes(t)
}
