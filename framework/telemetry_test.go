package framework_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
	metricnoop "go.opentelemetry.io/otel/metric/noop"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

const (
	stateChanges = "zkrecipes.client.state_changes"
	sessionsLost = "zkrecipes.client.sessions_lost"
	requests     = "zkrecipes.client.request.duration"
	retries      = "zkrecipes.client.retries"
)

func TestClientMetricsAreWhatHappened(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	tm := zkrtest.NewTelemetry(t)
	c := zkrtest.Client(t, []string{proxy.Addr()}, append(tm.Options, framework.WithSessionTimeout(2*time.Second))...)
	var mu sync.Mutex
	heard := map[framework.ConnectionState]int64{framework.Connected: 1} // before Listen
	stop := c.Listen(func(s framework.ConnectionState) {
		mu.Lock()
		heard[s]++
		mu.Unlock()
	})
	defer stop()
	ctx := zkrtest.Context(t)

	_, err := c.Create(ctx, "/m", nil)
	require.NoError(t, err)
	_, err = c.Create(ctx, "/m", nil)
	require.ErrorIs(t, err, zk.ErrNodeExists)
	_, _, err = c.Get(ctx, "/m")
	require.NoError(t, err)
	_, _, err = c.Get(ctx, "/missing")
	require.ErrorIs(t, err, zk.ErrNoNode)
	_, _, err = c.Children(ctx, "/m")
	require.NoError(t, err)
	calls := 0
	require.NoError(t, c.Retry(ctx, func(context.Context) error {
		if calls++; calls < 3 {
			return zk.ErrConnectionClosed
		}
		return nil
	}))
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, _, err = c.Get(cancelled, "/m")
	require.ErrorIs(t, err, context.Canceled)

	require.Equal(t, int64(2), tm.Count(t, requests, "operation", "create"))
	require.Equal(t, int64(1), tm.Count(t, requests, "operation", "create", "outcome", "ok"))
	require.Equal(t, int64(1), tm.Count(t, requests, "operation", "create", "outcome", "node_exists"))
	require.Equal(t, int64(1), tm.Count(t, requests, "operation", "get", "outcome", "ok"))
	require.Equal(t, int64(1), tm.Count(t, requests, "operation", "get", "outcome", "no_node"))
	require.Equal(t, int64(1), tm.Count(t, requests, "operation", "get", "outcome", "cancelled"))
	require.Equal(t, int64(1), tm.Count(t, requests, "operation", "children", "outcome", "ok"))
	require.Equal(t, int64(6), tm.Count(t, requests), "every operation, once")
	require.Equal(t, int64(2), tm.Sum(t, retries, "operation", "other"))
	require.Equal(t, int64(2), tm.Sum(t, retries), "no other retries")

	require.NoError(t, proxy.ExpireSession(ctx, 2*time.Second))
	require.NoError(t, c.WaitConnected(ctx))
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return heard[framework.Reconnected] == 1
	}, zkrtest.Wait, 10*time.Millisecond)
	require.Equal(t, int64(1), tm.Sum(t, sessionsLost), "one session lost")
	tm.RequireBoundedAttributes(t)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, int64(1), heard[framework.Lost])
	for s := framework.Connected; s <= framework.ReadOnly; s++ {
		require.Equal(t, heard[s], tm.Sum(t, stateChanges, "state", s.String()), "state %s", s)
	}
}

func TestTelemetryOptions(t *testing.T) {
	_, err := framework.New([]string{"127.0.0.1:1"}, framework.WithMeterProvider(nil))
	require.ErrorIs(t, err, framework.ErrInvalidOption)
	_, err = framework.New([]string{"127.0.0.1:1"}, framework.WithTracerProvider(nil))
	require.ErrorIs(t, err, framework.ErrInvalidOption)

	c, err := framework.New([]string{"127.0.0.1:1"}, framework.WithMeterProvider(metricnoop.NewMeterProvider()))
	require.NoError(t, err)
	defer c.Close()
	require.False(t, framework.Metering(c.ForRecipes().MeterProvider()), "a no-op provider measures nothing")
	require.False(t, framework.Tracing(c.ForRecipes().TracerProvider()), "no tracer provider: no spans")
	c, err = framework.New([]string{"127.0.0.1:1"}, zkrtest.NewTelemetry(t).Options...)
	require.NoError(t, err)
	defer c.Close()
	require.True(t, framework.Metering(c.ForRecipes().MeterProvider()))
	require.True(t, framework.Tracing(c.ForRecipes().TracerProvider()))
}
