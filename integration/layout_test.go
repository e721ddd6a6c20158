package integration

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/recipes/barrier"
	"github.com/zkrecipes/zkrecipes/recipes/counter"
	"github.com/zkrecipes/zkrecipes/recipes/group"
	"github.com/zkrecipes/zkrecipes/recipes/nodes"
	"github.com/zkrecipes/zkrecipes/recipes/shared"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// The persistent node, the group, the shared value, the counter and both barriers
// make the parents of their nodes as containers, as Curator's make them
// (creatingParentContainersIfNeeded): once the recipes' own nodes are gone, the
// server removes every parent. (A client cannot see that a node is a container:
// ZooKeeper shows it an ephemeral owner of 0, as for a persistent node.)
func TestStateRecipesMakeContainerParents(t *testing.T) {
	srv := zktest.NewServer(t, zktest.WithContainerCheckInterval(100*time.Millisecond))
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})

	node, err := nodes.New(c, "/c/nodes/n", nil)
	require.NoError(t, err)
	require.NoError(t, node.Start(ctx))
	member, err := group.New(c, "/c/group/g", "m1", nil)
	require.NoError(t, err)
	require.NoError(t, member.Start(ctx))
	value, err := shared.NewValue(c, "/c/shared/v", nil)
	require.NoError(t, err)
	require.NoError(t, value.Start(ctx))
	n, err := counter.New(c, "/c/counter/n")
	require.NoError(t, err)
	_, err = n.Add(ctx, 1)
	require.NoError(t, err)
	b, err := barrier.New(c, "/c/barrier/b")
	require.NoError(t, err)
	require.NoError(t, b.Set(ctx))
	d, err := barrier.NewDouble(c, "/c/double/d", 1)
	require.NoError(t, err)
	require.NoError(t, d.Enter(ctx))
	require.Len(t, zkrtest.Children(t, c, "/c"), 6)

	// Each recipe's own nodes go: closed, left, removed, or (for the shared value and
	// the counter, which Curator leaves in place too) deleted.
	require.NoError(t, node.Close(ctx))
	require.NoError(t, member.Close(ctx))
	require.NoError(t, value.Close(context.Background()))
	require.NoError(t, c.Delete(ctx, "/c/shared/v", -1))
	require.NoError(t, c.Delete(ctx, "/c/counter/n", -1))
	require.NoError(t, b.Remove(ctx))
	require.NoError(t, d.Leave(ctx))
	require.Eventually(t, func() bool {
		ok, _, err := c.Exists(ctx, "/c")
		return err == nil && !ok
	}, wait, 50*time.Millisecond, "every parent removed by the server")
}
