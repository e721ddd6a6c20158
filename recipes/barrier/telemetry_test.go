package barrier

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

const waits = "zkrecipes.barrier.wait.duration"

// A scripted run at both barriers: every blocking call is measured once, by recipe,
// operation and outcome, with a span that names the path.
func TestWaitMetrics(t *testing.T) {
	srv := zkrtest.Server(t)
	tm := zkrtest.NewTelemetry(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()}, tm.Options...)

	b, err := New(c, "/barriers/m")
	require.NoError(t, err)
	require.NoError(t, b.Wait(ctx)) // not set: ok
	require.NoError(t, b.Set(ctx))
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, b.Wait(short), context.DeadlineExceeded) // timed_out
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, b.Wait(cancelled), context.Canceled) // cancelled
	passed := run(ctx, b.Wait)
	require.NoError(t, b.Remove(ctx))
	require.NoError(t, <-passed) // ok

	d1, d2 := newDouble(t, c, "/barriers/d", 2), newDouble(t, c, "/barriers/d", 2)
	short, cancel = context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, d1.Enter(short), context.DeadlineExceeded) // alone: timed_out
	entered := run(ctx, d1.Enter)
	require.NoError(t, d2.Enter(ctx))
	require.NoError(t, <-entered)
	left := run(ctx, d1.Leave)
	require.NoError(t, d2.Leave(ctx))
	require.NoError(t, <-left)

	for _, w := range []struct {
		recipe, op, outcome string
		n                   int64
	}{
		{"barrier", "wait", "ok", 2}, {"barrier", "wait", "timed_out", 1}, {"barrier", "wait", "cancelled", 1},
		{"double_barrier", "enter", "ok", 2}, {"double_barrier", "enter", "timed_out", 1}, {"double_barrier", "leave", "ok", 2},
	} {
		require.Equal(t, w.n, tm.Count(t, waits, "recipe", w.recipe, "operation", w.op, "outcome", w.outcome), "%+v", w)
	}
	require.Equal(t, int64(9), tm.Count(t, waits), "no other wait")

	spans := map[string]int{}
	for _, s := range tm.Spans() {
		a := zkrtest.SpanAttributes(s)
		require.Contains(t, []string{"/barriers/m", "/barriers/d"}, a["path"], s.Name())
		spans[s.Name()+" "+a["outcome"]]++
	}
	require.Equal(t, map[string]int{"barrier wait ok": 2, "barrier wait timed_out": 1, "barrier wait cancelled": 1,
		"double_barrier enter ok": 2, "double_barrier enter timed_out": 1, "double_barrier leave ok": 2}, spans)
	tm.RequireBoundedAttributes(t)
}
