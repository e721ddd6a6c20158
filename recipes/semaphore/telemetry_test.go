package semaphore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

// An acquisition of several leases is one acquisition, each lease taken one hold;
// the semaphore's internal lock is no acquisition of the user's.
func TestMetricsOfLeasesAndMutex(t *testing.T) {
	srv := zkrtest.Server(t)
	tm := zkrtest.NewTelemetry(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()}, tm.Options...)
	s := newSemaphore(t, c, "/sem", 3)

	leases, err := s.Acquire(ctx, 2)
	require.NoError(t, err)
	_, err = s.TryAcquire(ctx, 2)
	require.ErrorIs(t, err, ErrNoLeases)
	waiting, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { _, err := s.Acquire(waiting, 2); done <- err }()
	require.Eventually(t, func() bool { return count(c, "/sem/leases") == 4 }, wait, 5*time.Millisecond,
		"one lease taken, waiting for the second")
	stop()
	require.ErrorIs(t, <-done, context.Canceled)
	releaseAll(t, leases)

	m := newMutex(t, c, "/mutex")
	require.NoError(t, m.Acquire(ctx))
	ok, err := newMutex(t, c, "/mutex").TryAcquire(ctx)
	require.NoError(t, err)
	require.False(t, ok)
	require.NoError(t, m.Release(ctx))

	const waited, hold = "zkrecipes.lock.wait.duration", "zkrecipes.lock.hold.duration"
	require.Equal(t, int64(1), tm.Count(t, waited, "recipe", "semaphore", "outcome", "acquired"))
	require.Equal(t, int64(1), tm.Count(t, waited, "recipe", "semaphore", "outcome", "refused"))
	require.Equal(t, int64(1), tm.Count(t, waited, "recipe", "semaphore", "outcome", "cancelled"))
	require.Equal(t, int64(1), tm.Count(t, waited, "recipe", "semaphore.mutex", "outcome", "acquired"))
	require.Equal(t, int64(1), tm.Count(t, waited, "recipe", "semaphore.mutex", "outcome", "refused"))
	require.Equal(t, int64(5), tm.Count(t, waited), "no other acquisition")
	// Two leases held, and one by each failed acquisition of two, given back when the
	// second could not be had.
	require.Equal(t, int64(4), tm.Count(t, hold, "recipe", "semaphore"), "one per lease")
	require.Equal(t, int64(1), tm.Count(t, hold, "recipe", "semaphore.mutex"))
	require.Zero(t, tm.Sum(t, "zkrecipes.lock.waiters"))

	spans := map[string]int{}
	for _, sp := range tm.Spans() {
		spans[sp.Name()+" "+zkrtest.SpanAttributes(sp)["outcome"]]++
	}
	require.Equal(t, map[string]int{
		"semaphore acquire acquired": 1, "semaphore acquire refused": 1, "semaphore acquire cancelled": 1,
		"semaphore.mutex acquire acquired": 1, "semaphore.mutex acquire refused": 1,
	}, spans)
	tm.RequireBoundedAttributes(t)
}
