package lockqueue_test

import (
	"context"
	"fmt"
	"sort"
	"strings"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/internal/lockqueue"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// A lock-like recipe is a queue with a rule; the observer of the recipe's name
// measures it, and the loop itself only tells the observer what happened.
func ExampleNew() {
	ctx := context.Background()
	srv, err := zktest.StartServer(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	reader := sdkmetric.NewManualReader()
	client, err := framework.New([]string{srv.Addr()},
		framework.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	q := lockqueue.New(client, "/locks/report", "lock-", lockqueue.Exclusive,
		lockqueue.Observed(lockqueue.Observe(client, "mutex")))
	h, err := q.Acquire(ctx, []byte("worker-1"), lockqueue.Options{Wait: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("held:", h.FencingToken() > 0)
	if err := h.Release(ctx); err != nil {
		fmt.Println(err)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		fmt.Println(err)
		return
	}
	var recorded []string // the lock's durations measured, beside the client's requests
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if h, ok := m.Data.(metricdata.Histogram[float64]); ok && strings.HasPrefix(m.Name, "zkrecipes.lock.") {
				recorded = append(recorded, fmt.Sprint(m.Name, ": ", h.DataPoints[0].Count))
			}
		}
	}
	sort.Strings(recorded)
	fmt.Println(recorded)
	// Output:
	// held: true
	// [zkrecipes.lock.hold.duration: 1 zkrecipes.lock.wait.duration: 1]
}
