package main

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/recipes/mutex"
)

// pagedNode is /api/node with every recipe list a test pages through.
type pagedNode struct {
	Children uiChildren `json:"children"`
	Recipe   *struct {
		Recipe       string          `json:"recipe"`
		Participants []participant   `json:"participants"`
		Members      []string        `json:"members"`
		Items        []partitionItem `json:"items"`
	} `json:"recipe"`
	Pages *uiRecipePages `json:"recipe_pages"`
	Note  string         `json:"recipe_note"`
}

// groupPage is /api/node on a group.
type groupPage struct {
	Recipe *groupView     `json:"recipe"`
	Pages  *uiRecipePages `json:"recipe_pages"`
}

// createIn creates n nodes under dir in transactions of 500: name(i), with data
// data(i) and the options given.
func createIn(ctx context.Context, t *testing.T, c *framework.Client, n int, name func(int) string, data func(int) []byte, opts ...framework.CreateOption) {
	t.Helper()
	for from := 0; from < n; from += 500 {
		var ops []framework.Op
		for i := from; i < min(from+500, n); i++ {
			ops = append(ops, framework.CreateOp(name(i), data(i), opts...))
		}
		_, err := c.Multi(ctx, ops...)
		require.NoError(t, err)
	}
}

// Every list zkr ui answers with comes a page at a time, however its recipe
// nests it: a partition's items and members, a semaphore's leases, a group's
// members, the overview's recipes; the page says where it starts, how many there
// are and what the page needs of the whole (holders, items without an owner, each
// member's share). A recipe with more nodes to read than the guard allows is
// named, not read, even when its own path has two children.
func TestUIPagesEveryList(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := testCtx(t)
	c := h.client
	const many = 250
	none := func(int) []byte { return nil }
	id := func(i int) []byte { return fmt.Appendf(nil, "holder-%03d", i) }

	// A partition: 250 items, two of them owned by m1; 120 members.
	_, err := c.Create(ctx, "/part/items", nil, framework.CreatingParents())
	require.NoError(t, err)
	_, err = c.Create(ctx, "/part/members", nil)
	require.NoError(t, err)
	createIn(ctx, t, c, many, func(i int) string { return fmt.Sprintf("/part/items/i%03d", i) }, none)
	createIn(ctx, t, c, 120, func(i int) string { return fmt.Sprintf("/part/members/m%03d", i) }, none, framework.Ephemeral())
	for _, item := range []string{"i000", "i101"} {
		owner, err := mutex.New(zkrtest.Client(t, []string{h.servers}), "/part/items/"+item, mutex.WithID("m000"))
		require.NoError(t, err)
		require.NoError(t, owner.Acquire(ctx))
	}
	// A semaphore: 250 leases, each holding.
	_, err = c.Create(ctx, "/sem/leases", nil, framework.CreatingParents())
	require.NoError(t, err)
	createIn(ctx, t, c, many, func(i int) string {
		return fmt.Sprintf("/sem/leases/_c_%08x-d9cb-469f-a165-70867728950e-lease-", i)
	}, id, framework.Ephemeral(), framework.Sequential())
	// A group of 250 members.
	_, err = c.Create(ctx, "/grp", nil)
	require.NoError(t, err)
	createIn(ctx, t, c, many, func(i int) string { return fmt.Sprintf("/grp/w%03d", i) }, none, framework.Ephemeral())
	// A partition past the guard: 1,001 items under a path of two children.
	_, err = c.Create(ctx, "/big/items", nil, framework.CreatingParents())
	require.NoError(t, err)
	_, err = c.Create(ctx, "/big/members", nil)
	require.NoError(t, err)
	createIn(ctx, t, c, uiRecipeLimit+1, func(i int) string { return fmt.Sprintf("/big/items/i%04d", i) }, none)

	u := runUI(t, h, "/") // it prints its URL once the copy is loaded: every node above is in it
	var n pagedNode
	u.json("/api/node?path=/part", http.StatusOK, &n)
	require.Len(t, n.Recipe.Items, uiPageDefault)
	require.Equal(t, uiPage{Total: many, Offset: 0}, *n.Pages.Items)
	require.Equal(t, many-2, n.Pages.Unowned)
	require.Equal(t, "i000=m000", n.Recipe.Items[0].Name+"="+n.Recipe.Items[0].Owner)
	require.Len(t, n.Recipe.Members, uiPageDefault)
	require.Equal(t, uiPage{Total: 120, Offset: 0}, *n.Pages.Members)
	require.Equal(t, 2, n.Pages.Owned[0], "m000's share")
	require.Len(t, n.Pages.Owned, uiPageDefault)

	n = pagedNode{}
	u.json("/api/node?path=/part&items_offset=100&members_offset=110&limit=5", http.StatusOK, &n)
	require.Equal(t, []string{"i100", "i101", "i102", "i103", "i104"}, itemNames(n.Recipe.Items))
	require.Equal(t, "m000", n.Recipe.Items[1].Owner)
	require.Equal(t, []string{"m110", "m111", "m112", "m113", "m114"}, n.Recipe.Members)
	require.Equal(t, uiPage{Total: many, Offset: 100}, *n.Pages.Items)
	require.Equal(t, many-2, n.Pages.Unowned)
	n = pagedNode{}
	u.json("/api/node?path=/part&items_offset=240&members_offset=500", http.StatusOK, &n)
	require.Len(t, n.Recipe.Items, 10)
	require.Empty(t, n.Recipe.Members)

	n = pagedNode{}
	u.json("/api/node?path=/sem", http.StatusOK, &n)
	require.Equal(t, "semaphore", n.Recipe.Recipe)
	require.Len(t, n.Recipe.Participants, uiPageDefault)
	require.Equal(t, uiPage{Total: many, Offset: 0}, *n.Pages.Participants)
	require.Equal(t, many, n.Pages.Holding)
	n = pagedNode{}
	u.json("/api/node?path=/sem&participants_offset=200&limit=1000", http.StatusOK, &n)
	require.Len(t, n.Recipe.Participants, 50)
	require.Equal(t, "holder-200", n.Recipe.Participants[0].ID)

	var g groupPage
	u.json("/api/node?path=/grp&members_offset=240", http.StatusOK, &g)
	require.Len(t, g.Recipe.Members, 10)
	require.Equal(t, uiPage{Total: many, Offset: 240}, *g.Pages.Members)
	require.Equal(t, "w240", g.Recipe.Members[0].ID)

	n = pagedNode{}
	u.json("/api/node?path=/big", http.StatusOK, &n)
	require.Nil(t, n.Recipe)
	require.Contains(t, n.Note, fmt.Sprintf("%d nodes: too many to read as a recipe here", uiRecipeLimit+1))

	var o uiOverview
	u.json("/api/overview?limit=2", http.StatusOK, &o)
	require.Equal(t, 4, o.Total)
	require.Equal(t, []string{"/big partition", "/grp group"}, overviewPaths(o))
	o = uiOverview{}
	u.json("/api/overview?offset=2&limit=2", http.StatusOK, &o)
	require.Equal(t, []string{"/part partition", "/sem semaphore"}, overviewPaths(o))
	require.Equal(t, 2, o.Offset)
	require.Equal(t, many, o.Recipes[0].Partition.Items)
}

func itemNames(items []partitionItem) []string {
	var s []string
	for _, it := range items {
		s = append(s, it.Name)
	}
	return s
}

func overviewPaths(o uiOverview) []string {
	var s []string
	for _, r := range o.Recipes {
		s = append(s, r.Path+" "+r.Recipe)
	}
	return s
}
