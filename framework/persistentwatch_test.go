package framework

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework/internal/wire"
	"github.com/zkrecipes/zkrecipes/framework/internal/wire/wiretest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// next takes the next event of w, failing the test after wait.
func next(t *testing.T, w *PersistentWatch) WatchEvent {
	t.Helper()
	select {
	case ev, ok := <-w.Events():
		require.True(t, ok, "the watch's channel closed")
		return ev
	case <-time.After(wait):
		t.Fatal("no event")
	}
	return WatchEvent{}
}

// nextNotReset takes the next event that is not a Reset.
func nextNotReset(t *testing.T, w *PersistentWatch) WatchEvent {
	t.Helper()
	for {
		if ev := next(t, w); !ev.Reset {
			return ev
		}
	}
}

// zxidShown says whether the server puts the change's zxid in a notification.
func zxidShown(srv *zktest.Server) bool { return !strings.HasPrefix(srv.Version(), "3.8.") }

func TestAddWatchRecursiveHearsTheSubtreeInOrder(t *testing.T) {
	srv := sharedServer(t)
	c := newClient(t, []string{srv.Addr()})
	ctx := testCtx(t)
	_, err := c.Create(ctx, "/p", nil)
	require.NoError(t, err)

	w, err := c.AddWatch(ctx, "/p", WatchPersistentRecursive)
	require.NoError(t, err)
	type change struct {
		typ  EventType
		path string
	}
	var made []int64
	note := func(s *Stat) { made = append(made, s.Mzxid) }
	_, err = c.Create(ctx, "/p/a", nil)
	require.NoError(t, err)
	_, s, err := c.Get(ctx, "/p/a")
	require.NoError(t, err)
	made = append(made, s.Czxid)
	s, err = c.Set(ctx, "/p/a", []byte("x"), -1)
	require.NoError(t, err)
	note(s)
	_, err = c.Create(ctx, "/p/a/b", nil)
	require.NoError(t, err)
	_, s, err = c.Get(ctx, "/p/a/b")
	require.NoError(t, err)
	made = append(made, s.Czxid)
	require.NoError(t, c.Delete(ctx, "/p/a/b", -1))
	made = append(made, 0) // a deletion's zxid is read from the parent below
	s, err = c.Set(ctx, "/p", []byte("y"), -1)
	require.NoError(t, err)
	note(s)
	_, s, err = c.Exists(ctx, "/p/a")
	require.NoError(t, err)
	made[3] = s.Pzxid

	want := []change{
		{EventNodeCreated, "/p/a"}, {EventNodeDataChanged, "/p/a"}, {EventNodeCreated, "/p/a/b"},
		{EventNodeDeleted, "/p/a/b"}, {EventNodeDataChanged, "/p"},
	}
	for i, ch := range want {
		ev := next(t, w)
		require.False(t, ev.Reset)
		require.Equal(t, ch, change{ev.Type, ev.Path}, "event %d", i)
		if zxidShown(srv) {
			require.Equal(t, made[i], ev.Zxid, "event %d's zxid", i)
		} else {
			require.Zero(t, ev.Zxid)
		}
	}
	require.NoError(t, w.Close(ctx))
	_, ok := <-w.Events()
	require.False(t, ok, "closed once the watch ends")
	require.NoError(t, w.Close(ctx), "a second Close")
	requireNotWatched(t, srv, "/p")
}

func TestAddWatchPersistentHearsItsNodeAndItsChildList(t *testing.T) {
	srv := sharedServer(t)
	c := newClient(t, []string{srv.Addr()})
	ctx := testCtx(t)
	w, err := c.AddWatch(ctx, "/q", WatchPersistent)
	require.NoError(t, err)
	_, err = c.Create(ctx, "/q", nil)
	require.NoError(t, err)
	_, err = c.Create(ctx, "/q/a", nil)
	require.NoError(t, err)
	_, err = c.Set(ctx, "/q/a", []byte("not heard"), -1)
	require.NoError(t, err)
	_, err = c.Set(ctx, "/q", []byte("x"), -1)
	require.NoError(t, err)
	require.NoError(t, c.Delete(ctx, "/q/a", -1))
	require.NoError(t, c.Delete(ctx, "/q", -1))
	for _, typ := range []EventType{EventNodeCreated, EventNodeChildrenChanged, EventNodeDataChanged,
		EventNodeChildrenChanged, EventNodeDeleted} {
		ev := next(t, w)
		require.Equal(t, WatchEvent{Type: typ, Path: "/q", Zxid: ev.Zxid}, ev)
	}
	require.NoError(t, w.Close(ctx))
	requireNotWatched(t, srv, "/q")
}

// A namespaced client's watch hears paths relative to its namespace.
func TestAddWatchInANamespace(t *testing.T) {
	srv := sharedServer(t)
	c := newClient(t, []string{srv.Addr()}, WithNamespace("app"))
	ctx := testCtx(t)
	w, err := c.AddWatch(ctx, "/", WatchPersistentRecursive)
	require.NoError(t, err)
	_, err = c.Create(ctx, "/x", nil)
	require.NoError(t, err)
	// The namespace's node is made with the first create: it is "/".
	require.Equal(t, WatchEvent{Type: EventNodeCreated, Path: "/"}, withoutZxid(next(t, w)))
	require.Equal(t, WatchEvent{Type: EventNodeCreated, Path: "/x"}, withoutZxid(next(t, w)))
	require.NoError(t, w.Close(ctx))
}

func TestAddWatchRefusesBadInputAtTheCall(t *testing.T) {
	srv := sharedServer(t)
	c := newClient(t, []string{srv.Addr()})
	ctx := testCtx(t)
	_, err := c.AddWatch(ctx, "no-slash", WatchPersistent)
	require.ErrorIs(t, err, ErrInvalidPath)
	_, err = c.AddWatch(ctx, "/p", WatchMode(7))
	require.ErrorIs(t, err, ErrInvalidOption)
	require.ErrorContains(t, err, "unknown watch mode 7")

	oneShot := newClient(t, []string{srv.Addr()}, WithOneShotWatches())
	_, err = oneShot.AddWatch(ctx, "/p", WatchPersistent)
	require.ErrorIs(t, err, ErrPersistentWatchUnsupported)

	require.NoError(t, c.Close())
	_, err = c.AddWatch(context.Background(), "/p", WatchPersistent)
	require.ErrorIs(t, err, ErrClosed)
}

// The client's close ends its watches: their channels close.
func TestClientCloseEndsTheWatches(t *testing.T) {
	srv := sharedServer(t)
	c := newClient(t, []string{srv.Addr()})
	w, err := c.AddWatch(testCtx(t), "/p", WatchPersistentRecursive)
	require.NoError(t, err)
	require.NoError(t, c.Close())
	_, ok := <-w.Events()
	require.False(t, ok)
	require.NoError(t, w.Close(testCtx(t)))
}

// After a cut connection and after an expired session the watch is set again, a
// Reset comes first, and a change made while the client was cut off is heard of
// through it: a read after the Reset shows it, and later changes are heard.
func TestAWatchIsSetAgainAfterAConnectionLossAndAnExpiry(t *testing.T) {
	t.Parallel()
	watchSetAgainAfterALossAndAnExpiry(t, zktest.NewServer(t))
}

// A server that enforces authentication refuses any request before the
// credentials, and drops the connection: on every new connection, the watches are
// set again only after go-zookeeper's re-sent credentials (a cut) or the client's
// own (a new session) have been accepted. Before, SetWatches2 came first, was
// refused, and the watch ended for good.
func TestAWatchIsSetAgainAfterAConnectionLossAndAnExpiryWhereAuthIsEnforced(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t, zktest.WithConfig("enforce.auth.enabled=true", "enforce.auth.schemes=digest"))
	watchSetAgainAfterALossAndAnExpiry(t, srv, WithAuth("digest", []byte("user:secret")))
}

func watchSetAgainAfterALossAndAnExpiry(t *testing.T, srv *zktest.Server, opts ...Option) {
	proxy := zktest.NewProxy(t, srv.Addr())
	c := newClient(t, []string{proxy.Addr()}, append(opts, WithSessionTimeout(4*time.Second))...)
	other := newClient(t, []string{srv.Addr()}, opts...)
	ctx := testCtx(t)
	w, err := c.AddWatch(ctx, "/p", WatchPersistentRecursive)
	require.NoError(t, err)

	for round, lose := range []func(){
		func() { // the same session comes back
			proxy.Cut()
			_, err := other.Create(ctx, "/p", []byte("while cut"))
			require.NoError(t, err)
			proxy.Restore()
		},
		func() { // a new session
			lost, stop := hears(c, Lost)
			defer stop()
			require.NoError(t, proxy.ExpireSession(ctx, 4*time.Second))
			_, err := other.Set(ctx, "/p", []byte("while expired"), -1)
			require.NoError(t, err)
			<-lost
		},
	} {
		lose()
		ev := next(t, w)
		require.True(t, ev.Reset, "round %d: the first event after the loss is a Reset: %+v", round, ev)
		require.Equal(t, WatchEvent{Type: EventNotWatching, Path: "/p", Reset: true}, ev)
		data, _, err := c.Get(ctx, "/p")
		require.NoError(t, err)
		require.Contains(t, []string{"while cut", "while expired"}[round], string(data))
		_, err = other.Create(ctx, fmt.Sprintf("/p/after%d", round), nil)
		require.NoError(t, err)
		ev = nextNotReset(t, w)
		require.Equal(t, EventNodeCreated, ev.Type, "round %d: %+v", round, ev)
		require.Equal(t, fmt.Sprintf("/p/after%d", round), ev.Path)
	}
	require.NoError(t, w.Close(ctx))
}

// ZooKeeper 3.8 keeps one watch mode per path and connection: a one-shot watch that
// go-zookeeper sets on a watched path replaced the persistent watch there. The
// connection sets it again after, so both go on (3.9 keeps them apart anyway).
func TestAOneShotWatchOnTheSamePathKeepsThePersistentOne(t *testing.T) {
	srv := sharedServer(t)
	c := newClient(t, []string{srv.Addr()})
	ctx := testCtx(t)
	_, err := c.Create(ctx, "/p", nil)
	require.NoError(t, err)
	w, err := c.AddWatch(ctx, "/p", WatchPersistentRecursive)
	require.NoError(t, err)
	_, _, once, err := c.GetW(ctx, "/p")
	require.NoError(t, err)
	for i := range 3 {
		_, err = c.Set(ctx, "/p", []byte{byte(i)}, -1)
		require.NoError(t, err)
		require.Equal(t, EventNodeDataChanged, next(t, w).Type, "change %d", i)
	}
	require.Equal(t, EventNodeDataChanged, (<-once).Type)
	_, err = c.Create(ctx, "/p/a", nil)
	require.NoError(t, err)
	require.Equal(t, WatchEvent{Type: EventNodeCreated, Path: "/p/a", Zxid: 0}, withoutZxid(next(t, w)))

	// Closing the persistent watch leaves go-zookeeper's next one-shot watch whole.
	_, _, once, err = c.GetW(ctx, "/p")
	require.NoError(t, err)
	require.NoError(t, w.Close(ctx))
	_, err = c.Set(ctx, "/p", []byte("last"), -1)
	require.NoError(t, err)
	select {
	case ev := <-once:
		require.Equal(t, EventNodeDataChanged, ev.Type)
	case <-time.After(wait):
		t.Fatal("the one-shot watch was removed with the persistent one")
	}
}

func withoutZxid(ev WatchEvent) WatchEvent { ev.Zxid = 0; return ev }

// A data change fires a path's data watches, not its child watch (go-zookeeper drops
// only its data and exist watchers; the server fires child watches for child
// changes): closing a persistent watch on the path afterwards leaves go-zookeeper's
// child watch there whole. On 3.8, whose removeWatches drops every watch of a path,
// the record of go-zookeeper's watches decides whether the removal is sent.
func TestAChildWatchOutlivesADataChangeAndAPersistentWatchsClose(t *testing.T) {
	srv := sharedServer(t)
	c := newClient(t, []string{srv.Addr()})
	ctx := testCtx(t)
	_, err := c.Create(ctx, "/p", nil)
	require.NoError(t, err)
	w, err := c.AddWatch(ctx, "/p", WatchPersistent)
	require.NoError(t, err)
	_, _, kids, err := c.ChildrenW(ctx, "/p")
	require.NoError(t, err)
	_, err = c.Set(ctx, "/p", []byte("x"), -1)
	require.NoError(t, err)
	require.Equal(t, EventNodeDataChanged, next(t, w).Type)
	require.NoError(t, w.Close(ctx))
	_, err = c.Create(ctx, "/p/kid", nil)
	require.NoError(t, err)
	select {
	case ev := <-kids:
		require.Equal(t, EventNodeChildrenChanged, ev.Type)
	case <-time.After(wait):
		t.Fatal("the child watch was removed with the persistent one")
	}
}

// Watches of one client on one path share the server's watch: each hears what its
// own mode follows, and closing one leaves the others whole.
func TestWatchesOnOnePathShareTheServersWatch(t *testing.T) {
	srv := sharedServer(t)
	c := newClient(t, []string{srv.Addr()})
	ctx := testCtx(t)
	_, err := c.Create(ctx, "/p", nil)
	require.NoError(t, err)
	node, err := c.AddWatch(ctx, "/p", WatchPersistent)
	require.NoError(t, err)
	tree, err := c.AddWatch(ctx, "/p", WatchPersistentRecursive)
	require.NoError(t, err)
	tree2, err := c.AddWatch(ctx, "/p", WatchPersistentRecursive)
	require.NoError(t, err)

	_, err = c.Create(ctx, "/p/a", nil)
	require.NoError(t, err)
	_, err = c.Set(ctx, "/p/a", []byte("x"), -1)
	require.NoError(t, err)
	_, err = c.Set(ctx, "/p", []byte("x"), -1)
	require.NoError(t, err)
	for _, w := range []*PersistentWatch{tree, tree2} {
		require.Equal(t, WatchEvent{Type: EventNodeCreated, Path: "/p/a"}, withoutZxid(next(t, w)))
		require.Equal(t, WatchEvent{Type: EventNodeDataChanged, Path: "/p/a"}, withoutZxid(next(t, w)))
		require.Equal(t, WatchEvent{Type: EventNodeDataChanged, Path: "/p"}, withoutZxid(next(t, w)))
	}
	require.Equal(t, WatchEvent{Type: EventNodeChildrenChanged, Path: "/p"}, withoutZxid(next(t, node)))
	require.Equal(t, WatchEvent{Type: EventNodeDataChanged, Path: "/p"}, withoutZxid(next(t, node)))

	require.NoError(t, tree.Close(ctx))
	require.NoError(t, tree2.Close(ctx)) // the server's watch narrows to the node
	require.NoError(t, c.Delete(ctx, "/p/a", -1))
	_, err = c.Set(ctx, "/p", []byte("y"), -1)
	require.NoError(t, err)
	require.Equal(t, WatchEvent{Type: EventNodeChildrenChanged, Path: "/p"}, withoutZxid(next(t, node)))
	require.Equal(t, WatchEvent{Type: EventNodeDataChanged, Path: "/p"}, withoutZxid(next(t, node)))
	select {
	case ev := <-node.Events():
		t.Fatalf("one event per change: %+v", ev)
	default:
	}
	require.NoError(t, node.Close(ctx))
	requireNotWatched(t, srv, "/p")
}

// requireNotWatched checks, with the server's wchp, that no watch of any kind is
// left on path.
func requireNotWatched(t *testing.T, srv *zktest.Server, path string) {
	t.Helper()
	require.Eventually(t, func() bool {
		out, err := srv.FourLetter(testCtx(t), "wchp")
		require.NoError(t, err)
		for _, line := range strings.Split(out, "\n") {
			if line == path {
				return false
			}
		}
		return true
	}, wait, 10*time.Millisecond, "a watch is left on %s", path)
}

// A reply larger than WithMaxPacketSize fails its request with a clear error, is
// skipped without being held, and the connection goes on.
func TestAReplyLargerThanTheMaximumFailsItsRequest(t *testing.T) {
	srv := sharedServer(t)
	c := newClient(t, []string{srv.Addr()}, WithMaxPacketSize(2048))
	ctx := testCtx(t)
	_, err := c.Create(ctx, "/big", make([]byte, 4096))
	require.NoError(t, err)
	_, _, err = c.Get(ctx, "/big")
	require.ErrorIs(t, err, ErrPacketTooLarge)
	require.ErrorContains(t, err, "more than 2048")
	_, _, err = c.Get(ctx, "/")
	require.NoError(t, err)
	require.Equal(t, Connected, c.State())

	_, err = New([]string{srv.Addr()}, WithMaxPacketSize(10))
	require.ErrorIs(t, err, ErrInvalidOption)
}

// A server that announces a connect response of 1 GiB is refused without reading
// it: the wait for a connection says why.
func TestAHugeConnectResponseIsRefused(t *testing.T) {
	t.Parallel()
	addr := wiretest.Start(t, func(conn *wiretest.Conn) {
		_, _ = conn.ReadPacket()
		_, _ = conn.Write([]byte{0x40, 0, 0, 0}) // 1 GiB follows, says the server
	})
	c, err := New([]string{addr}, WithConnectionTimeout(3*time.Second))
	require.NoError(t, err)
	defer c.Close()
	err = c.WaitConnected(context.Background())
	var ce *ConnectError
	require.ErrorAs(t, err, &ce)
	require.ErrorIs(t, err, ErrPacketTooLarge, "%v", err)
	require.ErrorContains(t, err, "1073741824 bytes")
}

// A server without persistent watches (before 3.6) answers addWatch as an
// unimplemented request and drops the connection: AddWatch says so.
func TestAServerWithoutPersistentWatchesIsReported(t *testing.T) {
	t.Parallel()
	addr := wiretest.Start(t, fakeOldServer)
	c := newClient(t, []string{addr}, WithRetryPolicy(RetryNTimes(2, 10*time.Millisecond)))
	_, err := c.AddWatch(testCtx(t), "/p", WatchPersistentRecursive)
	require.ErrorIs(t, err, ErrPersistentWatchUnsupported)
	_, err = c.AddWatch(testCtx(t), "/q", WatchPersistent)
	require.ErrorIs(t, err, ErrPersistentWatchUnsupported, "remembered")
	require.False(t, errors.Is(err, zk.ErrConnectionClosed))
}

// fakeOldServer speaks enough of ZooKeeper's protocol for a session, and answers
// anything else as a server before 3.6 answers an opcode it does not know:
// unimplemented, then the connection dropped (UnimplementedRequestProcessor).
func fakeOldServer(conn *wiretest.Conn) {
	if conn.Accept(4000, 1) != nil {
		return
	}
	conn.Serve(func(r wiretest.Request) bool {
		_ = conn.Send(wiretest.Header(r.Xid, 0, wire.CodeUnimplemented))
		return false
	})
}
