package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/recipes/cache"
	"github.com/zkrecipes/zkrecipes/recipes/election"
	"github.com/zkrecipes/zkrecipes/recipes/group"
	"github.com/zkrecipes/zkrecipes/recipes/mutex"
)

// brief is an overview's recipe on one line, as a test compares it.
func brief(r uiRecipe) string {
	s := r.Path + " " + r.Recipe
	switch {
	case r.Queue != nil:
		var ids []string
		for _, h := range r.Queue.Holders {
			ids = append(ids, h.ID)
		}
		s += fmt.Sprintf(" holders=%s waiting=%d", strings.Join(ids, ","), r.Queue.Waiting)
	case r.Group != nil:
		s += fmt.Sprintf(" members=%d", r.Group.Members)
	case r.Partition != nil:
		p := r.Partition
		s += fmt.Sprintf(" members=%s items=%d unowned=%s", strings.Join(p.MemberIDs, ","), p.Items, strings.Join(p.UnownedItems, ","))
	}
	if r.Note != "" {
		s += " note=" + r.Note
	}
	return s
}

func briefs(o uiOverview) []string {
	var s []string
	for _, r := range o.Recipes {
		s = append(s, brief(r))
	}
	return s
}

// /api/overview lists every recipe under the root, wherever it is, with its
// holder and waiters, leader, size, or members and items without an owner; it
// does not take a folder of locks named "locks" for a semaphore, nor a value for
// a recipe; and it follows the hand-over of a lock.
func TestUIOverviewListsEveryRecipe(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := testCtx(t)
	client := func() *framework.Client { return zkrtest.Client(t, []string{h.servers}) }

	a, err := mutex.New(client(), "/app/locks/report", mutex.WithID("a"))
	require.NoError(t, err)
	require.NoError(t, a.Acquire(ctx))
	b, err := mutex.New(client(), "/app/locks/report", mutex.WithID("b"))
	require.NoError(t, err)
	acquired := make(chan error, 1)
	go func() { acquired <- b.Acquire(ctx) }()
	latch, err := election.NewLatch(client(), "/app/scheduler", election.WithID("s1"))
	require.NoError(t, err)
	require.NoError(t, latch.Start(ctx))
	t.Cleanup(func() { _ = latch.Close(zkrtest.Context(t)) })
	for _, id := range []string{"w1", "w2"} {
		m, err := group.New(client(), "/app/workers", id, []byte("up"))
		require.NoError(t, err)
		require.NoError(t, m.Start(ctx))
		t.Cleanup(func() { _ = m.Close(zkrtest.Context(t)) })
	}
	// A partition's layout: one member, an item it owns and one nobody owns.
	_, err = client().Create(ctx, "/part/members/m1", nil, framework.CreatingParents(), framework.Ephemeral())
	require.NoError(t, err)
	owner, err := mutex.New(client(), "/part/items/i1", mutex.WithID("m1"))
	require.NoError(t, err)
	require.NoError(t, owner.Acquire(ctx))
	_, err = h.client.Create(ctx, "/part/items/i2", nil)
	require.NoError(t, err)
	_, err = h.client.Create(ctx, "/app/next-id", []byte{0, 0, 0, 0, 0, 0, 0, 7}) // a counter's value: not listed
	require.NoError(t, err)

	hs := startUI(t, h.client, "/")
	var last []string
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the last overview read:\n%s", strings.Join(last, "\n"))
		}
	})
	overview := func() uiOverview {
		var o uiOverview
		require.Equal(t, http.StatusOK, getJSON(t, hs.URL+"/api/overview", &o))
		last = briefs(o)
		return o
	}
	want := []string{
		"/app/locks/report mutex holders=a waiting=1",
		"/app/scheduler latch holders=s1 waiting=0",
		"/app/workers group members=2",
		"/part partition members=m1 items=2 unowned=i2",
	}
	eventually(t, "every recipe", func() bool { return strings.Join(briefs(overview()), "\n") == strings.Join(want, "\n") })
	o := overview()
	require.Equal(t, "/", o.Root)
	require.True(t, o.Exists)
	require.Empty(t, o.Capped)
	require.Equal(t, connConnected, o.Connection)
	holder := o.Recipes[0].Queue.Holders[0]
	require.Positive(t, holder.FencingToken)
	require.GreaterOrEqual(t, holder.AgeSeconds, 0.0)

	require.NoError(t, a.Release(ctx))
	require.NoError(t, <-acquired)
	want[0] = "/app/locks/report mutex holders=b waiting=0"
	eventually(t, "b holding", func() bool { return strings.Join(briefs(overview()), "\n") == strings.Join(want, "\n") })
	require.NoError(t, b.Release(ctx))
	require.NoError(t, owner.Release(ctx))
}

// The walk is bounded: it looks at most at limits.nodes nodes, and says so when it
// stopped short; under the bound it says nothing. The recipes it found come a
// page at a time, by path.
func TestUIOverviewIsBounded(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := testCtx(t)
	ops := []framework.Op{framework.CreateOp("/g", nil)}
	for i := range 3 {
		dir := fmt.Sprintf("/g/group%d", i)
		ops = append(ops, framework.CreateOp(dir, nil), framework.CreateOp(dir+"/member", nil, framework.Ephemeral()))
	}
	_, err := h.client.Multi(ctx, ops...)
	require.NoError(t, err)
	ca := loadCache(t, h.client, "/g")

	o := readOverview(ctx, ca, overviewLimits{nodes: 100}, 0, 3, 0, connConnected)
	require.Equal(t, []string{"/g/group0 group members=1", "/g/group1 group members=1", "/g/group2 group members=1"}, briefs(*o))
	require.Empty(t, o.Capped)
	require.Equal(t, 3, o.Total)
	require.Equal(t, 4, o.Examined) // /g and the three groups, not their members

	o = readOverview(ctx, ca, overviewLimits{nodes: 100}, 0, 2, 0, connConnected)
	require.Equal(t, []string{"/g/group0 group members=1", "/g/group1 group members=1"}, briefs(*o))
	require.Equal(t, 3, o.Total)
	require.Empty(t, o.Capped)
	o = readOverview(ctx, ca, overviewLimits{nodes: 100}, 2, 2, 0, connConnected)
	require.Equal(t, []string{"/g/group2 group members=1"}, briefs(*o))
	require.Equal(t, 2, o.Offset)

	o = readOverview(ctx, ca, overviewLimits{nodes: 2}, 0, 100, 0, connConnected)
	require.Equal(t, []string{"/g/group0 group members=1"}, briefs(*o))
	require.Equal(t, 2, o.Examined)
	require.Equal(t, "looked at the first 2 of the 7 nodes under /g, breadth first: recipes further down are not listed (zkr ui with a deeper PATH lists them)", o.Capped)
}

// An id longer than an overview's line is cut on a character's boundary.
func TestClip(t *testing.T) {
	t.Parallel()
	require.Equal(t, "short", clip("short"))
	long := strings.Repeat("é", uiOverviewIDLen) // two bytes each
	got := clip(long)
	require.Equal(t, strings.Repeat("é", uiOverviewIDLen/2)+"…", got)
}

// loadCache loads root's subtree into a cache read through c.
func loadCache(t *testing.T, c *framework.Client, root string) *cache.Cache {
	t.Helper()
	ca, err := cache.New(c, root)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ca.Close(context.Background()) })
	require.NoError(t, ca.Start(testCtx(t)))
	return ca
}
