package cache

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// With TrustReadOnly, a node whose ACL lets no one change it is followed without a
// data watch, and a delete and re-create of it between two listings of its parent,
// which no watch of ours reports, is still seen: through the parent's cversion.
func TestTrustReadOnlyWatchesOnlyWhatCanChange(t *testing.T) {
	srv := zktest.NewServer(t)
	writer := newClient(t, []string{srv.Addr()})
	ctx := testCtx(t)
	fixed := framework.WithNodePerms(framework.PermRead)
	create(t, writer, "/app", "")
	_, err := writer.Create(ctx, "/app/x", []byte("old"), fixed)
	require.NoError(t, err)
	create(t, writer, "/app/y", "y")
	// On a persistent watch the cache sets no data watch at all: TrustReadOnly is for
	// one-shot watches.
	reader := newClient(t, []string{srv.Addr()}, framework.WithOneShotWatches())
	ca, h := started(t, reader, "/app", Depth(1), TrustReadOnly())
	requireConverges(t, ca, writer, 1, true)
	watched := func() []string { return zkrtest.DataWatches(t, srv, reader.SessionID()) }
	require.Equal(t, []string{"/app", "/app/y"}, watched(), "no data watch on the read-only node")

	// Deleted and made again in one transaction: the child watch fires once, and the
	// listing after it shows the same names. Only the cversion (+2) tells.
	n := len(h.get())
	_, err = writer.Multi(ctx, framework.DeleteOp("/app/x", -1), framework.CreateOp("/app/x", []byte("new"), fixed))
	require.NoError(t, err)
	h.waitEvents(t, n, "Deleted /app/x", "Created /app/x")
	requireConverges(t, ca, writer, 1, true)
	require.Equal(t, []string{"/app", "/app/y"}, watched())

	// With a sibling made in the same transaction: one change the names explain, two
	// they do not.
	n = len(h.get())
	_, err = writer.Multi(ctx, framework.DeleteOp("/app/x", -1), framework.CreateOp("/app/x", []byte("newer"), fixed),
		framework.CreateOp("/app/z", []byte("z"), fixed))
	require.NoError(t, err)
	h.waitEventsUnordered(t, n, "Deleted /app/x", "Created /app/x", "Created /app/z")
	requireConverges(t, ca, writer, 1, true)

	// Made again with an ACL that allows changes: it is watched again, and its
	// changes are heard.
	n = len(h.get())
	_, err = writer.Multi(ctx, framework.DeleteOp("/app/x", -1), framework.CreateOp("/app/x", []byte("open")))
	require.NoError(t, err)
	h.waitEvents(t, n, "Deleted /app/x", "Created /app/x")
	require.Equal(t, []string{"/app", "/app/x", "/app/y"}, watched())
	n = len(h.get())
	set(t, writer, "/app/x", "changed")
	h.waitEvents(t, n, "Changed /app/x")
	requireConverges(t, ca, writer, 1, true)
	h.requireClean(t)
}

// The server's own nodes were made at zxid 0: a czxid of 0 is not taken for the
// read-only node the copy already has.
func TestTrustReadOnlyReadsTheServersOwnNodes(t *testing.T) {
	srv := zkrtest.Server(t)
	ca, _ := started(t, newClient(t, []string{srv.Addr()}), "/", Depth(1), TrustReadOnly())
	n, ok := ca.Get("/zookeeper")
	require.True(t, ok)
	require.Zero(t, n.Stat.Czxid)
}
