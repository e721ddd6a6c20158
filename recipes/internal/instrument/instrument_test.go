package instrument

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.uber.org/goleak"

	"github.com/zkrecipes/zkrecipes/framework"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Without providers, or with no-op ones, a recipe's measurements neither allocate
// nor read the clock.
func TestUnmeasuredAllocatesNothing(t *testing.T) {
	for name, opts := range map[string][]framework.Option{
		"no providers":    nil,
		"no-op providers": {framework.WithMeterProvider(metricnoop.NewMeterProvider())},
	} {
		c, err := framework.New([]string{"127.0.0.1:1"}, opts...)
		require.NoError(t, err)
		r := New(c, "test")
		require.Nil(t, r, name)
		counter := r.Counter("c", "", "{x}", Attr{Key: "k", Values: []string{"v"}})
		gauge := r.Gauge("g", "", "{x}")
		durations := r.Durations("d", "", Attr{Key: "k", Values: []string{"v"}})
		ctx := context.Background()
		allocs := testing.AllocsPerRun(100, func() {
			start := r.Now()
			span := r.Start(ctx, "op", "/p")
			counter.Add(1, "v")
			gauge.Add(1)
			durations.Since(start, "v")
			span.End(Outcome(nil), nil)
			r.Call(ctx, "op", "/p").End(durations, OK, nil)
			if !start.IsZero() {
				t.Fatal("the clock was read")
			}
		})
		require.Zero(t, allocs, name)
		require.NoError(t, c.Close())
	}
}

func TestOutcome(t *testing.T) {
	require.Equal(t, OK, Outcome(nil))
	require.Equal(t, TimedOut, Outcome(context.DeadlineExceeded))
	require.Equal(t, Cancelled, Outcome(context.Canceled))
	require.Equal(t, Failed, Outcome(errors.New("other")))
}
