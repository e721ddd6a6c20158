package lockqueue

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	metricnoop "go.opentelemetry.io/otel/metric/noop"

	"github.com/zkrecipes/zkrecipes/framework"
)

// Without providers, or with no-op ones, the measurements of an acquisition and its
// hold neither allocate nor read the clock: the instrumentation is off at no cost.
func TestUnmeasuredAllocatesNothing(t *testing.T) {
	for name, opts := range map[string][]framework.Option{
		"no providers":    nil,
		"no-op providers": {framework.WithMeterProvider(metricnoop.NewMeterProvider())},
	} {
		c, err := framework.New([]string{"127.0.0.1:1"}, opts...)
		require.NoError(t, err)
		q := &Queue{Client: c, Path: "/l", Name: "lock-", Names: []string{"lock-"}, Rule: Exclusive, Recipe: "mutex"}
		n := &Node{Path: "/l/lock-0000000000", Name: "lock-0000000000"}
		h := &Held{Node: n}
		ctx := context.Background()
		allocs := testing.AllocsPerRun(100, func() {
			a := q.Begin(ctx, true)
			a.queued(n)
			tel := q.telemetry()
			since := tel.granted()
			tel.lost()
			tel.ended(since)
			a.End(h, nil)
		})
		require.Zero(t, allocs, name)
		require.Nil(t, q.telemetry(), name)
		require.NoError(t, c.Close())
	}
}
