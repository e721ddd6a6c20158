package integration

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
)

// The liveness and soak checks must be able to fail, as the others must.
func TestLivenessAndSoakChecksCatchViolations(t *testing.T) {
	t0 := time.Now()
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

	t.Run("liveness", func(t *testing.T) {
		w := &workload{name: "mutex", attempts: []attempt{
			{start: at(-9), end: at(0.5), held: false}, // timed out by its own deadline, just after
			{start: at(-1), end: at(2), held: true},
			{start: at(3), end: at(4), held: true},
		}}
		require.Empty(t, stuck([]*workload{w}, t0))
		require.Equal(t, []time.Duration{2 * time.Second, time.Second, 500 * time.Millisecond}, afterFaults([]*workload{w}, t0))
		w.attempts = append(w.attempts, attempt{start: at(-2), end: at(9), held: false})
		require.Len(t, stuck([]*workload{w}, t0), 1, "waited 9 s after the last fault")
		w.attempts = []attempt{{start: at(5), end: at(13), held: true}}
		require.Len(t, stuck([]*workload{w}, t0), 1, "begun after the faults, waited 8 s")
	})

	t.Run("soak", func(t *testing.T) {
		sampled := func(vs ...float64) *series {
			se := &series{name: "goroutines", slack: 10}
			for i, v := range vs {
				se.at = append(se.at, time.Duration(i)*time.Second)
				se.v = append(se.v, v)
			}
			return se
		}
		flat := sampled(100, 101, 99, 100, 102, 100, 99, 101, 100, 100)
		require.False(t, flat.growing())
		levelled := sampled(100, 100, 100, 150, 150, 150, 151, 150, 150, 150)
		require.False(t, levelled.growing(), "grew once, then levelled off")
		leaking := sampled(100, 100, 120, 140, 160, 180, 200, 220, 240, 260)
		require.True(t, leaking.growing())
		require.False(t, sampled(1, 2, 3).growing(), "too few samples to judge")
		s := &sampler{series: []*series{leaking, flat}}
		require.Len(t, s.problems(), 1)
		leaking.unjudged = true
		require.False(t, leaking.growing(), "the test's own heap is shown, not judged")
	})

	t.Run("heap split", func(t *testing.T) {
		// The soak's heaps are hundreds of MiB, sampled well at the default rate (a
		// sample per 512 KiB); these few MiB need a finer one. Both takes scale the
		// records made before at the same rate, so the difference is the new ones.
		rate := runtime.MemProfileRate
		runtime.MemProfileRate = 4 << 10
		t.Cleanup(func() { runtime.MemProfileRate = rate })
		owners := heapOwners{}
		before := owners.take()
		// 16 MiB made by the test, and errors made by the library: fmt.Errorf in
		// ValidatePath, which is fmt's code under the library's frame.
		kept := make([][]byte, 1<<14)
		for i := range kept {
			kept[i] = make([]byte, 1<<10)
		}
		var was runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&was)
		errs := make([]error, 1<<17) // 2 MiB, the test's
		for i := range errs {
			errs[i] = framework.ValidatePath("no/leading/slash")
		}
		var now runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&now)
		after := owners.take()
		library := float64(now.HeapAlloc-was.HeapAlloc) - 2<<20 // what the errors hold
		require.Greater(t, library, float64(4<<20), "the errors are several MiB")
		require.InDelta(t, 18<<20, after.test-before.test, 2<<20, "the test's 16 MiB and its 2 MiB slice")
		require.InDelta(t, library, after.clients-before.clients, library/6, "the library's errors")
		runtime.KeepAlive(kept)
		runtime.KeepAlive(errs)
	})
}
