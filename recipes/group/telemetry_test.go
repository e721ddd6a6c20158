package group

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

const (
	membershipChanges = "zkrecipes.group.membership_changes"
	groupMembers      = "zkrecipes.group.members"
)

// A member sees two others join, one update its payload and leave: its changes and
// the members it sees now are counted as they happen; its Close takes its view out.
func TestMembershipMetrics(t *testing.T) {
	srv := zkrtest.Server(t)
	tm := zkrtest.NewTelemetry(t)
	ctx := testCtx(t)
	a := join(t, newClient(t, []string{srv.Addr()}, tm.Options...), "/groups/m", "a", "pa")
	other := newClient(t, []string{srv.Addr()})
	figures := func(joined, left, updated, members int64) func() bool {
		return func() bool {
			return tm.Sum(t, membershipChanges, "recipe", "group", "change", "joined") == joined &&
				tm.Sum(t, membershipChanges, "change", "left") == left &&
				tm.Sum(t, membershipChanges, "change", "updated") == updated &&
				tm.Sum(t, groupMembers, "recipe", "group") == members
		}
	}
	require.True(t, figures(0, 0, 0, 1)(), "the first list holds a: no join counted")

	b := join(t, other, "/groups/m", "b", "pb")
	sees(t, a, map[string]string{"a": "pa", "b": "pb"}) // so that a sees the payload change
	require.NoError(t, b.SetPayload(ctx, []byte("pb2")))
	join(t, other, "/groups/m", "c", "pc")
	sees(t, a, map[string]string{"a": "pa", "b": "pb2", "c": "pc"})
	require.NoError(t, b.Close(ctx))
	sees(t, a, map[string]string{"a": "pa", "c": "pc"})
	require.Eventually(t, figures(2, 1, 1, 2), wait, 5*time.Millisecond)

	require.NoError(t, a.Close(ctx))
	require.True(t, figures(2, 1, 1, 0)(), "a closed member sees nobody")
	tm.RequireBoundedAttributes(t)
}
