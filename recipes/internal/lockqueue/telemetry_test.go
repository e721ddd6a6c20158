package lockqueue

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	metricnoop "go.opentelemetry.io/otel/metric/noop"

	"github.com/zkrecipes/zkrecipes/framework"
)

// Without providers, or with no-op ones, a recipe's observer is nil, and the loop's
// calls to it, for an acquisition and its hold, neither allocate nor read the clock:
// the instrumentation is off at no cost.
func TestUnmeasuredAllocatesNothing(t *testing.T) {
	for name, opts := range map[string][]framework.Option{
		"no providers":    nil,
		"no-op providers": {framework.WithMeterProvider(metricnoop.NewMeterProvider())},
	} {
		c, err := framework.New([]string{"127.0.0.1:1"}, opts...)
		require.NoError(t, err)
		o := Observe(c, "mutex")
		require.Nil(t, o, name)
		require.Nil(t, ObserveElection(c, "latch").HoldsOnly(), name)
		n := &Node{Path: "/l/lock-0000000000"}
		h := &Held{Node: n}
		ctx := context.Background()
		allocs := testing.AllocsPerRun(100, func() {
			a := o.Begin(ctx, "/l", true)
			a.queued(n)
			since := o.granted()
			o.lost()
			o.ended(since)
			a.End(h, nil)
			if !since.IsZero() {
				t.Fatal("the clock was read")
			}
		})
		require.Zero(t, allocs, name)
		require.NoError(t, c.Close())
	}
}
