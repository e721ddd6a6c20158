package cache

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// A cache loads a tree, follows changes and rebuilds after its session expires: the
// events counted by type are those its listener heard, and the rebuild is counted
// once.
func TestEventMetrics(t *testing.T) {
	srv := zkrtest.Server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	tm := zkrtest.NewTelemetry(t)
	ctx := testCtx(t)
	writer := newClient(t, []string{srv.Addr()})
	create(t, writer, "/m", "")
	create(t, writer, "/m/a", "1")
	c := newClient(t, []string{proxy.Addr()}, append(tm.Options, framework.WithSessionTimeout(2*time.Second))...)
	ca, err := New(c, "/m")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ca.Close(context.Background()) })
	heard := make(chan EventType, 100)
	ca.Listen(func(ev Event) { heard <- ev.Type })
	require.NoError(t, ca.Start(ctx))
	counts := map[EventType]int64{}
	hear := func(until EventType) {
		t.Helper()
		for {
			typ := <-heard
			counts[typ]++
			if typ == until {
				return
			}
		}
	}
	hear(Initialized)
	set(t, writer, "/m/a", "2")
	hear(Changed)
	create(t, writer, "/m/b", "")
	hear(Created)
	require.NoError(t, proxy.ExpireSession(ctx, c.NegotiatedSessionTimeout()))
	hear(Synced) // after Suspended and Lost
	require.NoError(t, writer.Delete(ctx, "/m/b", -1))
	hear(Deleted)

	require.Equal(t, int64(1), counts[Lost])
	for typ := Created; typ <= Error; typ++ {
		require.Equal(t, counts[typ], tm.Sum(t, "zkrecipes.cache.events", "recipe", "cache", "type", strings.ToLower(typ.String())), typ.String())
	}
	require.Equal(t, int64(1), tm.Count(t, "zkrecipes.cache.rebuild.duration", "recipe", "cache"))
	tm.RequireBoundedAttributes(t)
}
