package nodes

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

const presenceChanges = "zkrecipes.persistent_node.presence_changes"

// A node made, deleted by another client and made again: two placed, one gone, as
// its listener hears them.
func TestPresenceMetrics(t *testing.T) {
	srv := zkrtest.Server(t)
	tm := zkrtest.NewTelemetry(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()}, tm.Options...)
	other := newClient(t, []string{srv.Addr()})
	p := newNode(t, c, "/telemetry/node", nil)
	heard := make(chan Event, 10)
	p.Listen(func(ev Event) { heard <- ev })
	require.NoError(t, p.Start(ctx))
	require.True(t, (<-heard).Present)
	require.NoError(t, other.Delete(ctx, "/telemetry/node", -1))
	require.False(t, (<-heard).Present)
	require.True(t, (<-heard).Present)

	require.Equal(t, int64(2), tm.Sum(t, presenceChanges, "recipe", "persistent_node", "change", "placed"))
	require.Equal(t, int64(1), tm.Sum(t, presenceChanges, "recipe", "persistent_node", "change", "gone"))
	require.Equal(t, int64(3), tm.Sum(t, presenceChanges))
	tm.RequireBoundedAttributes(t)
}
