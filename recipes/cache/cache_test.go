package cache

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

func TestThreeLevelsBuiltChangedAndTornDown(t *testing.T) {
	srv := zkrtest.Server(t)
	writer := newClient(t, []string{srv.Addr()})
	create(t, writer, "/app", "root")
	create(t, writer, "/app/a", "a")
	ca, h := started(t, newClient(t, []string{srv.Addr()}), "/app")
	h.waitEvents(t, 0, "Created /app", "Created /app/a", "Initialized")
	n, ok := ca.Get("/app/a")
	require.True(t, ok)
	require.Equal(t, "a", string(n.Data))

	// One change at a time, each heard before the next.
	steps := []struct {
		do   func()
		want []string
	}{
		{func() { create(t, writer, "/app/b", "b") }, []string{"Created /app/b"}},
		{func() { create(t, writer, "/app/a/x", "x") }, []string{"Created /app/a/x"}},
		{func() { create(t, writer, "/app/a/x/1", "1") }, []string{"Created /app/a/x/1"}},
		{func() { set(t, writer, "/app/a/x/1", "one") }, []string{"Changed /app/a/x/1"}},
		{func() { set(t, writer, "/app", "root2") }, []string{"Changed /app"}},
		{func() { set(t, writer, "/app/a/x", "x") }, []string{"Changed /app/a/x"}},
		{func() { del(t, writer, "/app/a/x/1") }, []string{"Deleted /app/a/x/1"}},
		{func() { del(t, writer, "/app/a/x") }, []string{"Deleted /app/a/x"}},
		{func() { del(t, writer, "/app/b") }, []string{"Deleted /app/b"}},
		{func() { del(t, writer, "/app/a") }, []string{"Deleted /app/a"}},
		{func() { del(t, writer, "/app") }, []string{"Deleted /app"}},
		{func() { create(t, writer, "/app", "again") }, []string{"Created /app"}},
	}
	for _, step := range steps {
		n := len(h.get())
		step.do()
		h.waitEvents(t, n, step.want...)
		requireConverges(t, ca, writer, math.MaxInt, true)
	}
	changed := h.get()[len(h.get())-7]
	require.Equal(t, Changed, changed.Type)
	require.Equal(t, "x", string(changed.New.Data))
	require.Equal(t, "/app/a/x", changed.New.Path)
	require.Equal(t, []string(nil), ca.Children("/app/a"), "gone with its parent")
	require.Equal(t, 1, ca.Len())
}

func TestDeleteAndRecreateWithinOneWatchWindow(t *testing.T) {
	srv := zkrtest.Server(t)
	writer := newClient(t, []string{srv.Addr()})
	ctx := testCtx(t)
	create(t, writer, "/app", "")
	create(t, writer, "/app/x", "old")
	create(t, writer, "/app/x/c", "old child")
	ca, h := started(t, newClient(t, []string{srv.Addr()}), "/app")
	old, _ := ca.Get("/app/x")

	// One transaction: the watches fire on the deletes, and the reads that follow
	// find the new nodes, of the same names and versions.
	n := len(h.get())
	_, err := writer.Multi(ctx,
		framework.DeleteOp("/app/x/c", -1), framework.DeleteOp("/app/x", -1),
		framework.CreateOp("/app/x", []byte("new")), framework.CreateOp("/app/x/c", []byte("new child")))
	require.NoError(t, err)
	h.waitEvents(t, n, "Deleted /app/x/c", "Deleted /app/x", "Created /app/x", "Created /app/x/c")
	requireConverges(t, ca, writer, math.MaxInt, true)
	now, _ := ca.Get("/app/x")
	require.Equal(t, old.Stat.Version, now.Stat.Version, "the same version: only the czxid tells them apart")
	require.NotEqual(t, old.Stat.Czxid, now.Stat.Czxid)

	// The root itself.
	n = len(h.get())
	_, err = writer.Multi(ctx,
		framework.DeleteOp("/app/x/c", -1), framework.DeleteOp("/app/x", -1), framework.DeleteOp("/app", -1),
		framework.CreateOp("/app", []byte("new root")))
	require.NoError(t, err)
	h.waitEvents(t, n, "Deleted /app/x/c", "Deleted /app/x", "Deleted /app", "Created /app")
	requireConverges(t, ca, writer, math.MaxInt, true)

	// A change made while the watch it fired is being set again: two writes in one
	// transaction are one change to a watcher.
	n = len(h.get())
	_, err = writer.Multi(ctx, framework.SetOp("/app", []byte("1"), -1), framework.SetOp("/app", []byte("2"), -1))
	require.NoError(t, err)
	h.waitEvents(t, n, "Changed /app")
	requireConverges(t, ca, writer, math.MaxInt, true)
}

func TestRootCreatedLateDeletedAndRecreated(t *testing.T) {
	srv := zkrtest.Server(t)
	writer := newClient(t, []string{srv.Addr()})
	ca, h := started(t, newClient(t, []string{srv.Addr()}), "/late/root")
	h.waitEvents(t, 0, "Initialized")
	require.Zero(t, ca.Len())
	_, ok := ca.Get("/late/root")
	require.False(t, ok)

	_, err := writer.Create(testCtx(t), "/late/root/child", []byte("c"), framework.CreatingParents())
	require.NoError(t, err)
	h.waitEvents(t, 1, "Created /late/root", "Created /late/root/child")
	requireConverges(t, ca, writer, math.MaxInt, true)

	del(t, writer, "/late/root/child")
	del(t, writer, "/late/root")
	h.waitEvents(t, 3, "Deleted /late/root/child", "Deleted /late/root")
	require.Zero(t, ca.Len())

	create(t, writer, "/late/root", "back")
	h.waitEvents(t, 5, "Created /late/root")
	requireConverges(t, ca, writer, math.MaxInt, true)
}

func TestDepthDataAndSelector(t *testing.T) {
	srv := zkrtest.Server(t)
	writer := newClient(t, []string{srv.Addr()})
	reader := newClient(t, []string{srv.Addr()})
	for _, p := range []string{"/d", "/d/a", "/d/a/x", "/d/b", "/d/skip", "/d/skip/y"} {
		create(t, writer, p, p)
	}

	node, hn := started(t, reader, "/d", Depth(0))
	children, hc := started(t, reader, "/d", Depth(1))
	tree, ht := started(t, reader, "/d", WithoutData(), WithSelector(func(p string) bool { return p != "/d/skip" }))
	hn.waitEvents(t, 0, "Created /d", "Initialized")
	hc.waitEventsUnordered(t, 0, "Created /d", "Created /d/a", "Created /d/b", "Created /d/skip", "Initialized")
	ht.waitEventsUnordered(t, 0, "Created /d", "Created /d/a", "Created /d/a/x", "Created /d/b", "Initialized")
	requireConverges(t, node, writer, 0, true)
	requireConverges(t, children, writer, 1, true)
	n, ok := tree.Get("/d/a/x")
	require.True(t, ok)
	require.Nil(t, n.Data, "WithoutData")
	require.Equal(t, []string{"a", "b"}, tree.Children("/d"))

	// Changes below each cache's reach are not heard; changes within it are.
	create(t, writer, "/d/a/x/deep", "")
	set(t, writer, "/d/skip/y", "ignored")
	set(t, writer, "/d/a", "seen by the children and the tree")
	create(t, writer, "/d/c", "")
	set(t, writer, "/d", "seen by all")
	hn.waitEvents(t, 2, "Changed /d")
	hc.waitEventsUnordered(t, 5, "Changed /d/a", "Created /d/c", "Changed /d")
	// The set of /d is the last change: the tree may hold its six nodes (/d/c made)
	// before it has heard of it.
	require.Eventually(t, func() bool {
		n, _ := tree.Get("/d")
		return tree.Len() == 6 && n.Stat.Version == 1
	}, wait, 5*time.Millisecond, "the tree hears every change, the set of /d last")
	ht.requireClean(t)
	_, ok = tree.Get("/d/skip")
	require.False(t, ok, "not selected")
	n, _ = tree.Get("/d")
	require.Nil(t, n.Data)
	require.EqualValues(t, 1, n.Stat.Version, "versions without data")
}
