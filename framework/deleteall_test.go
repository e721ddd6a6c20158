package framework

import (
	"fmt"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
)

func TestDeleteAll(t *testing.T) {
	srv := sharedServer(t)
	c := newClient(t, []string{srv.Addr()}, WithNamespace("app"))
	other := newClient(t, []string{srv.Addr()}, WithNamespace("app"))
	ctx := testCtx(t)
	tree := func(root string) {
		for _, p := range []string{root, root + "/a", root + "/a/x", root + "/a/y", root + "/b", root + "/b/z/deep"} {
			_, err := c.Create(ctx, p, nil, CreatingParents())
			require.NoError(t, err)
		}
	}
	gone := func(p string) {
		ok, _, err := c.Exists(ctx, p)
		require.NoError(t, err)
		require.False(t, ok, "%s is still there", p)
	}

	tree("/t")
	_, err := c.Create(ctx, "/keep", nil)
	require.NoError(t, err)
	require.NoError(t, c.DeleteAll(ctx, "/t"))
	gone("/t")
	ok, _, err := c.Exists(ctx, "/keep")
	require.NoError(t, err)
	require.True(t, ok, "only the subtree asked for")
	require.NoError(t, c.DeleteAll(ctx, "/t"), "already gone is done")

	// Others deleting nodes of the tree meanwhile: what they deleted is done.
	tree("/t")
	require.NoError(t, c.deleteAll(ctx, "/t", func(p string) {
		if p == "/app/t" {
			require.NoError(t, other.Delete(ctx, "/t/a/x", -1))
			require.NoError(t, other.Delete(ctx, "/t/a/y", -1))
			require.NoError(t, other.Delete(ctx, "/t/a", -1))
		}
	}))
	gone("/t")

	// A child created after the listing: the node is listed again.
	tree("/t")
	lists := 0
	require.NoError(t, c.deleteAll(ctx, "/t", func(p string) {
		if p == "/app/t/b" {
			if lists++; lists == 1 {
				_, err := other.Create(ctx, "/t/b/late", nil)
				require.NoError(t, err)
			}
		}
	}))
	require.Equal(t, 2, lists)
	gone("/t")

	// A creator that never stops: DeleteAll gives up, with a clear error.
	tree("/t")
	lists = 0
	err = c.deleteAll(ctx, "/t", func(p string) {
		if p == "/app/t" {
			lists++
			_, err := other.Create(ctx, fmt.Sprintf("/t/new-%d", lists), nil)
			require.NoError(t, err)
		}
	})
	require.ErrorIs(t, err, zk.ErrNotEmpty)
	require.ErrorContains(t, err, "delete all /t: /t still has children after 5 rounds")
	require.Equal(t, deleteAllRounds, lists)

	require.ErrorIs(t, c.DeleteAll(ctx, "/"), ErrInvalidPath)
	require.ErrorIs(t, c.DeleteAll(ctx, "t"), ErrInvalidPath)
	require.ErrorIs(t, c.Namespaced("").DeleteAll(ctx, "/zookeeper"), ErrInvalidPath)
}
