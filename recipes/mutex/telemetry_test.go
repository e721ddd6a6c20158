package mutex

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

const (
	waitDuration = "zkrecipes.lock.wait.duration"
	holdDuration = "zkrecipes.lock.hold.duration"
	holdsLost    = "zkrecipes.lock.holds_lost"
	waiters      = "zkrecipes.lock.waiters"
)

// A scripted run on two clients: three acquisitions granted (and one re-entered,
// which is none), one timed out, one cancelled, one refused, one hold lost to a
// session expiry. The figures must be exactly these.
func TestMetricsAndSpansAreWhatHappened(t *testing.T) {
	srv := zkrtest.Server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	tm := zkrtest.NewTelemetry(t)
	ctx := testCtx(t)
	a := newMutex(t, newClient(t, []string{srv.Addr()}, tm.Options...), "/locks/m")
	bClient := newClient(t, []string{proxy.Addr()}, append(tm.Options, framework.WithSessionTimeout(2*time.Second))...)
	b := newMutex(t, bClient, "/locks/m")

	require.NoError(t, a.Acquire(ctx))
	require.NoError(t, a.Acquire(ctx), "reentered: no acquisition of its own")

	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, b.Acquire(short), context.DeadlineExceeded)
	ok, err := b.TryAcquire(ctx)
	require.NoError(t, err)
	require.False(t, ok)

	waiting, stopWaiting := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- b.Acquire(waiting) }()
	require.Eventually(t, func() bool { return tm.Sum(t, waiters, "recipe", "mutex") == 1 }, wait, 5*time.Millisecond)
	stopWaiting()
	require.ErrorIs(t, <-done, context.Canceled)
	require.Zero(t, tm.Sum(t, waiters, "recipe", "mutex"))

	require.NoError(t, a.Release(ctx))
	require.NoError(t, a.Release(ctx))
	require.NoError(t, b.Acquire(ctx))
	require.NoError(t, proxy.ExpireSession(ctx, 2*time.Second))
	<-b.Lost()
	require.ErrorIs(t, b.Release(ctx), ErrLost)
	require.NoError(t, a.Acquire(ctx))
	require.NoError(t, a.Release(ctx))

	for outcome, n := range map[string]int64{"acquired": 3, "timed_out": 1, "cancelled": 1, "refused": 1, "failed": 0} {
		require.Equal(t, n, tm.Count(t, waitDuration, "recipe", "mutex", "outcome", outcome), outcome)
	}
	require.Equal(t, int64(3), tm.Count(t, holdDuration, "recipe", "mutex"))
	require.Equal(t, int64(1), tm.Sum(t, holdsLost, "recipe", "mutex"))
	require.Zero(t, tm.Sum(t, waiters, "recipe", "mutex"))
	tm.RequireBoundedAttributes(t)

	spans := tm.Spans()
	outcomes := map[string]int{}
	for _, s := range spans {
		require.Equal(t, "mutex acquire", s.Name())
		attrs := zkrtest.SpanAttributes(s)
		require.Equal(t, "/locks/m", attrs["path"])
		require.Equal(t, "mutex", attrs["recipe"])
		outcomes[attrs["outcome"]]++
		if attrs["outcome"] == "acquired" {
			require.Contains(t, attrs["node"], "/locks/m/_c_")
			require.NotEmpty(t, attrs["fencing_token"])
		}
		require.Equal(t, codes.Unset, s.Status().Code, "no acquisition failed")
	}
	require.Equal(t, map[string]int{"acquired": 3, "timed_out": 1, "cancelled": 1, "refused": 1}, outcomes)
}
