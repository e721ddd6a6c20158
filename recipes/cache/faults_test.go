package cache

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// changesOutside is what a writer does while the cache cannot hear, and the events
// that difference must come back as.
func changesOutside(t *testing.T, w *framework.Client, log *writes) []string {
	t.Helper()
	log.add("/storm/d0/new", 0, "new")
	log.add("/storm/d1/n0", 1, "changed")
	log.add("/storm/d1/n1", 1, "changed")
	del(t, w, "/storm/d0/n0")
	del(t, w, "/storm/d0/n1")
	create(t, w, "/storm/d0/new", "new")
	set(t, w, "/storm/d1/n0", "changed")
	set(t, w, "/storm/d1/n1", "changed")
	for n := range 10 {
		del(t, w, fmt.Sprintf("/storm/d4/n%d", n))
	}
	del(t, w, "/storm/d4")
	want := []string{"Deleted /storm/d0/n0", "Deleted /storm/d0/n1", "Created /storm/d0/new",
		"Changed /storm/d1/n0", "Changed /storm/d1/n1", "Deleted /storm/d4"}
	for n := range 10 {
		want = append(want, fmt.Sprintf("Deleted /storm/d4/n%d", n))
	}
	return want
}

// nodeEvents keeps the events about nodes.
func nodeEvents(evs []Event) []Event {
	var out []Event
	for _, ev := range evs {
		if ev.Path != "" {
			out = append(out, ev)
		}
	}
	return out
}

// watchModes are the two ways a cache follows its tree: one persistent watch, and
// one-shot watches (a server before 3.6), for the tests of faults, which each
// recovers from its own way.
var watchModes = []struct {
	name string
	opts []framework.Option
}{
	{"persistent watch", nil},
	{"one-shot watches", []framework.Option{framework.WithOneShotWatches()}},
}

func TestSessionExpiryRebuildsWithTheDifferencesOnly(t *testing.T) {
	for _, mode := range watchModes {
		t.Run(mode.name, func(t *testing.T) { sessionExpiryRebuilds(t, mode.opts) })
	}
}

func sessionExpiryRebuilds(t *testing.T, opts []framework.Option) {
	srv := zktest.NewServer(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	ctx := testCtx(t)
	w := &writes{set: map[string]bool{}}
	writer := newClient(t, []string{srv.Addr()})
	leaves := stormTree(t, writer, w)
	c := newClient(t, []string{proxy.Addr()}, append(opts, framework.WithSessionTimeout(2*time.Second))...)
	ca, h := started(t, c, "/storm")
	session := c.SessionID()

	// Changes made while the session expires come back as their differences, not as
	// the whole tree deleted and created again.
	n := len(h.get())
	expired := make(chan error, 1)
	go func() { expired <- proxy.ExpireSession(ctx, c.NegotiatedSessionTimeout()) }()
	h.waitFor(t, n, Suspended)
	want := changesOutside(t, writer, w)
	require.NoError(t, <-expired)
	lost := h.waitFor(t, n, Lost)
	synced := h.waitFor(t, lost, Synced)
	require.NotEqual(t, session, c.SessionID(), "a new session")
	require.ElementsMatch(t, want, brief(nodeEvents(h.get()[n:synced])))
	requireConverges(t, ca, writer, math.MaxInt, true)
	h.requireClean(t)

	// Again, in the middle of a storm of changes.
	leaves = leaves[20:40] // those changesOutside left alone
	n = len(h.get())
	stormDone := make(chan struct{})
	go func() {
		defer close(stormDone)
		storm(t, []*framework.Client{writer, newClient(t, []string{srv.Addr()})}, leaves, 400, w)
	}()
	require.NoError(t, proxy.ExpireSession(ctx, c.NegotiatedSessionTimeout()))
	<-stormDone
	h.waitFor(t, h.waitFor(t, n, Lost), Synced)
	requireConverges(t, ca, writer, math.MaxInt, true)
	h.requireClean(t)
	requireWritten(t, h, w)
}

// A change made while the client is cut off is in the copy once the connection is
// back (on a persistent watch, through its Reset).
func TestConnectionCutAndServerRestart(t *testing.T) {
	for _, mode := range watchModes {
		t.Run(mode.name, func(t *testing.T) { connectionCutAndServerRestart(t, mode.opts) })
	}
}

func connectionCutAndServerRestart(t *testing.T, opts []framework.Option) {
	// Sessions long enough to outlive a server's restart on a busy machine.
	srv := zktest.NewServer(t, zktest.WithSessionTimeouts(400*time.Millisecond, time.Minute))
	proxy := zktest.NewProxy(t, srv.Addr())
	w := &writes{set: map[string]bool{}}
	writer := newClient(t, []string{srv.Addr()})
	stormTree(t, writer, w)
	c := newClient(t, []string{proxy.Addr()}, append(opts, framework.WithSessionTimeout(30*time.Second))...)
	ca, h := started(t, c, "/storm")
	session := c.SessionID()

	// A cut connection, changes made meanwhile, the same session back.
	n := len(h.get())
	proxy.Cut()
	h.waitFor(t, n, Suspended)
	want := changesOutside(t, writer, w)
	proxy.Restore()
	synced := h.waitFor(t, n, Synced)
	require.Equal(t, session, c.SessionID())
	require.ElementsMatch(t, want, brief(nodeEvents(h.get()[n:synced])))
	requireConverges(t, ca, writer, math.MaxInt, true)

	// A server restart: nobody can change anything meanwhile, so nothing is reported
	// but the connection's states; then changes are heard again.
	n = len(h.get())
	srv.Stop()
	h.waitFor(t, n, Suspended)
	require.NoError(t, srv.Start())
	synced = h.waitFor(t, n, Synced)
	require.Equal(t, []string{"Suspended", "Synced"}, brief(h.get()[n:synced+1]))
	require.Equal(t, session, c.SessionID())
	require.NoError(t, writer.WaitConnected(testCtx(t)))
	n = len(h.get())
	set(t, writer, "/storm/d2/n2", "after the restart")
	h.waitEvents(t, n, "Changed /storm/d2/n2")
	requireConverges(t, ca, writer, math.MaxInt, true)
	h.requireClean(t)
}

// On one-shot watches (a server before 3.6), a data and a child watch per node.
func TestCloseLeavesNoWatchAndNoGoroutine(t *testing.T) {
	srv := zktest.NewServer(t)
	writer := newClient(t, []string{srv.Addr()})
	create(t, writer, "/w", "")
	var paths []string
	for d := range 10 {
		dir := fmt.Sprintf("/w/d%d", d)
		create(t, writer, dir, "")
		paths = append(paths, dir)
		for n := range 30 {
			p := fmt.Sprintf("%s/n%d", dir, n)
			create(t, writer, p, "")
			paths = append(paths, p)
		}
	}
	paths = append(paths, "/w")
	c := newClient(t, []string{srv.Addr()}, framework.WithOneShotWatches())
	before := runtime.NumGoroutine()
	ca, _ := started(t, c, "/w")
	require.Equal(t, len(paths), ca.Len())
	// No goroutine per node: 311 nodes and 622 watches, a few goroutines.
	require.Less(t, runtime.NumGoroutine()-before, 40)
	require.ElementsMatch(t, paths, zkrtest.DataWatches(t, srv, c.SessionID()), "watches on the cached nodes")
	require.Equal(t, 2*len(paths), watchCount(t, srv), "a data and a child watch per node, on the whole server")

	require.NoError(t, ca.Close(context.Background()))
	// Every request the cache sent is answered once a Sync of the same session is;
	// then fire every watch.
	require.NoError(t, c.Sync(testCtx(t), "/w"))
	for _, p := range paths {
		set(t, writer, p, "fire the data watch")
		create(t, writer, p+"/fire", "")
		del(t, writer, p+"/fire")
	}
	require.Empty(t, zkrtest.DataWatches(t, srv, c.SessionID()), "no watch set again after Close")
	require.Zero(t, watchCount(t, srv))
	n, ok := ca.Get("/w/d0/n0")
	require.True(t, ok, "the copy stays readable")
	require.Empty(t, n.Data)
	require.Equal(t, len(paths), ca.Len())
}

// On a persistent watch, one watch on the server for the whole tree, none left
// after Close.
func TestOneWatchFollowsTheTree(t *testing.T) {
	srv := zktest.NewServer(t)
	writer := newClient(t, []string{srv.Addr()})
	create(t, writer, "/w", "")
	for d := range 10 {
		create(t, writer, fmt.Sprintf("/w/d%d", d), "")
		for n := range 30 {
			create(t, writer, fmt.Sprintf("/w/d%d/n%d", d, n), "")
		}
	}
	c := newClient(t, []string{srv.Addr()})
	before := runtime.NumGoroutine()
	ca, h := started(t, c, "/w")
	require.Equal(t, 311, ca.Len())
	require.Less(t, runtime.NumGoroutine()-before, 40)
	require.Equal(t, []string{"/w"}, zkrtest.DataWatches(t, srv, c.SessionID()), "one recursive watch")
	one := 1
	if strings.HasPrefix(srv.Version(), "3.8.") {
		one = 2 // 3.8 files a recursive watch in both its tables, data and children
	}
	require.Equal(t, one, watchCount(t, srv), "on the whole server")

	n := len(h.get())
	create(t, writer, "/w/d0/n0/new", "")
	set(t, writer, "/w/d9/n29", "x")
	del(t, writer, "/w/d5/n5")
	h.waitEventsUnordered(t, n, "Created /w/d0/n0/new", "Changed /w/d9/n29", "Deleted /w/d5/n5")
	requireConverges(t, ca, writer, math.MaxInt, true)
	require.Equal(t, one, watchCount(t, srv), "the reads set none")

	require.NoError(t, ca.Close(testCtx(t)))
	require.Zero(t, watchCount(t, srv), "Close removes it")
	h.requireClean(t)
}

// watchCount is the number of watches on the server, data and child watches of
// every session (mntr's zk_watch_count; wchc and wchs show data watches only).
func watchCount(t *testing.T, srv *zktest.Server) int {
	t.Helper()
	out, err := srv.FourLetter(testCtx(t), "mntr")
	require.NoError(t, err)
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "zk_watch_count" {
			n, err := strconv.Atoi(f[1])
			require.NoError(t, err)
			return n
		}
	}
	t.Fatalf("no zk_watch_count in mntr: %s", out)
	return 0
}

func TestACLRefusalIsReportedOnce(t *testing.T) {
	srv := zktest.NewServer(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	owner := newClient(t, []string{srv.Addr()},
		framework.WithAuth("digest", []byte("alice:secret")), framework.WithACL(framework.FixedACL(framework.AuthACL(framework.PermAll)...)))
	writer := newClient(t, []string{srv.Addr()})
	create(t, writer, "/acl", "")
	create(t, writer, "/acl/open", "")
	create(t, owner, "/acl/private", "secret")
	ca, h := started(t, newClient(t, []string{proxy.Addr()}), "/acl")
	require.Equal(t, []string{"open"}, ca.Children("/acl"))
	var errs []Event
	for _, ev := range h.get() {
		if ev.Type == Error {
			errs = append(errs, ev)
		}
	}
	require.Len(t, errs, 1)
	require.Equal(t, "/acl/private", errs[0].Path)
	require.ErrorIs(t, errs[0].Err, ErrRefused)
	require.ErrorIs(t, errs[0].Err, framework.ErrNoAuth)

	// A reconnection reads every node again, but not the refused one.
	n := len(h.get())
	proxy.Cut()
	h.waitFor(t, n, Suspended)
	proxy.Restore()
	synced := h.waitFor(t, n, Synced)
	require.Equal(t, []string{"Suspended", "Synced"}, brief(h.get()[n:synced+1]))
	n = len(h.get())
	set(t, writer, "/acl/open", "x")
	set(t, owner, "/acl/private", "y")
	h.waitEvents(t, n, "Changed /acl/open")
}
