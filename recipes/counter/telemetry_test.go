package counter

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

const updates = "zkrecipes.counter.update.duration"

// A scripted run of writes, each ending another way: every one is counted once, by
// operation and outcome, with a span, and the promotion to the lock is counted.
func TestWriteMetrics(t *testing.T) {
	srv := zkrtest.Server(t)
	tm := zkrtest.NewTelemetry(t)
	ctx := testCtx(t)
	f := newFaulty(t, srv.Addr(), srv.Addr(), tm.Options...) // Set(100): ok
	other := newCounter(t, f.observer, "/faults")

	_, err := f.n.Add(ctx, 1) // ok
	require.NoError(t, err)
	ok, err := f.n.CompareAndSet(ctx, 101, 5) // ok
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = f.n.CompareAndSet(ctx, 101, 6) // unchanged
	require.NoError(t, err)
	require.False(t, ok)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = f.n.Add(cancelled, 1) // cancelled
	require.ErrorIs(t, err, context.Canceled)

	inFlight, cancel := context.WithCancel(ctx)
	done := f.addInjured(t, inFlight, zkrtest.LoseRequest)
	cancel()
	require.ErrorIs(t, (<-done).err, ErrUnknownOutcome) // unknown
	f.d.Cut()

	// On a connection of their own: the cancelled Add's resend may still be queued on
	// f's, and would take the interference meant for them.
	d := &zkrtest.LossyDialer{}
	fresh := newClient(t, []string{srv.Addr()}, append(tm.Options, framework.WithDialer(d.Dial))...)
	promoted := newCounter(t, fresh, "/faults", WithRetryPolicy(framework.RetryNTimes(0, 0)), PromotedToLock("/locks/faults"))
	plain := newCounter(t, fresh, "/faults", WithRetryPolicy(framework.RetryNTimes(0, 0)))
	for _, n := range []*Counter{promoted, plain} {
		d.BeforeNext(func() {
			_, err := other.Add(ctx, 10) // our version is stale now
			assert.NoError(t, err)
		})
		_, err = n.Add(ctx, 1) // promoted: ok; plain: gave_up
		if n == plain {
			require.ErrorIs(t, err, ErrGaveUp)
		} else {
			require.NoError(t, err)
		}
	}

	for _, w := range []struct {
		op, outcome string
		n           int64
	}{
		{"set", "ok", 1}, {"add", "ok", 2}, {"add", "cancelled", 1}, {"add", "unknown", 1}, {"add", "gave_up", 1},
		{"compare_and_set", "ok", 1}, {"compare_and_set", "unchanged", 1},
	} {
		require.Equal(t, w.n, tm.Count(t, updates, "recipe", "counter", "operation", w.op, "outcome", w.outcome), "%s %s", w.op, w.outcome)
	}
	require.Equal(t, int64(8), tm.Count(t, updates), "no other write")
	require.Equal(t, int64(1), tm.Sum(t, "zkrecipes.counter.promotions", "recipe", "counter"))

	outcomes := map[string]int{}
	for _, s := range tm.Spans() {
		a := zkrtest.SpanAttributes(s)
		if a["recipe"] != "counter" {
			continue
		}
		require.Equal(t, "/faults", a["path"])
		outcomes[s.Name()+" "+a["outcome"]]++
	}
	require.Equal(t, map[string]int{"counter set ok": 1, "counter add ok": 2, "counter add cancelled": 1, "counter add unknown": 1,
		"counter add gave_up": 1, "counter compare_and_set ok": 1, "counter compare_and_set unchanged": 1}, outcomes)
	tm.RequireBoundedAttributes(t)
}
