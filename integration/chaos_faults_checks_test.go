package integration

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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
	})
}
