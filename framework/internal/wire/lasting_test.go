package wire

import (
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework/internal/wire/wiretest"
)

// wantSetWatches is a setWatches request's body, written here apart from the
// package's: relative zxid, then the data, exist and child watches' paths.
func wantSetWatches(since int64, data ...string) []byte {
	j := wiretest.Jute(nil).Long(since).Int(int32(len(data)))
	for _, p := range data {
		j = j.Str(p)
	}
	return j.Int(0).Int(0)
}

// A waiter's one write sets a connection's watch on the node ahead (a getData) and a
// lasting one on ours (a setWatches). The connection's ends with it; the lasting one
// is set again on the next connection of the session, as of go-zookeeper's last
// zxid, until a notification fires it, and an expired session drops it.
func TestALastingWatchIsSetAgainOnEachConnection(t *testing.T) {
	h := testHandle(t, nil)
	last := int64(42)
	h.lastZxid.Store(&last)
	connect := func(session int64) (*Conn, *wiretest.Conn, <-chan wiretest.Request) {
		conn, server := pipeHandleConn(t, h)
		srv := &wiretest.Conn{Conn: server}
		return conn, srv, sessionWithID(t, conn, srv, session)
	}
	// next is the first request on a connection that the test makes after it is up:
	// whatever the connection set again comes before it.
	next := func(conn *Conn, reqs <-chan wiretest.Request) wiretest.Request {
		_ = conn.Exists("/probe")
		return <-reqs
	}

	conn, srv, reqs := connect(7)
	got, watch, set := conn.GetWAndSetWatches("/l/lock-1", 10, "/l/lock-2")
	get, req := <-reqs, <-reqs
	require.Equal(t, int32(opcodeGetData), get.Opcode, "the node ahead with a read, which checks our READ")
	require.Equal(t, append([]byte(wiretest.Jute(nil).Str("/l/lock-1")), 1), get.Body)
	require.Equal(t, int32(opcodeSetWatches), req.Opcode)
	require.Equal(t, wantSetWatches(10, "/l/lock-2"), req.Body, "ours as of the zxid given")
	sendThenPing(t, conn, srv,
		getDataReply(get.Xid, 50),
		wiretest.Header(req.Xid, 50, 0))
	require.NoError(t, (<-got).Err())
	require.NoError(t, (<-set).Err())
	require.True(t, conn.watches.on("/l/lock-1"))
	require.True(t, h.lasting.on("/l/lock-2"))
	_ = conn.Close()
	_, ok := <-watch
	require.False(t, ok, "the connection's watch ends with it")

	conn, srv, reqs = connect(7)
	again := next(conn, reqs)
	require.Equal(t, int32(opcodeSetWatches), again.Opcode, "set again first")
	require.Equal(t, wantSetWatches(50, "/l/lock-2"), again.Body, "ours alone, as of go-zookeeper's last zxid: the reply's")
	require.Equal(t, int32(opcodeExists), (<-reqs).Opcode)
	notification := wiretest.Notification(60, int32(zk.EventNodeDeleted), "/l/lock-2")
	sendThenPing(t, conn, srv, wiretest.Header(again.Xid, 55, 0), notification)
	require.False(t, h.lasting.on("/l/lock-2"), "fired, and gone")
	_ = conn.Close()

	conn, _, reqs = connect(7)
	require.Equal(t, int32(opcodeExists), next(conn, reqs).Opcode, "nothing to set again")
	_ = conn.SetWatches(60, "/l/lock-3")
	req = <-reqs
	require.Equal(t, wantSetWatches(60, "/l/lock-3"), req.Body, "ours alone")
	_ = conn.Close()

	_, _, _ = connect(0) // the session expired
	require.False(t, h.lasting.on("/l/lock-3"), "dropped with its session")
	conn, _, reqs = connect(8)
	require.Equal(t, int32(opcodeExists), next(conn, reqs).Opcode, "nothing to set again on the new session")
}

// A waiter that may read the node ahead watches it, with ours, in one setWatches
// and no read: the node ahead is the connection's watch, and only ours lasts. A node
// ahead already gone notifies at once, before the reply, as the server does, and
// its watch hears it.
func TestTheWatchAheadAndOursInOneSetWatches(t *testing.T) {
	h := testHandle(t, nil)
	last := int64(42)
	h.lastZxid.Store(&last)
	conn, server := pipeHandleConn(t, h)
	srv := &wiretest.Conn{Conn: server}
	reqs := sessionWithID(t, conn, srv, 7)

	set, watch := conn.WatchAndSetWatches("/l/lock-1", 10, "/l/lock-2")
	req := <-reqs
	require.Equal(t, int32(opcodeSetWatches), req.Opcode)
	require.Equal(t, wantSetWatches(10, "/l/lock-1", "/l/lock-2"), req.Body, "both as of the zxid given, in one request")
	sendThenPing(t, conn, srv, wiretest.Header(req.Xid, 50, 0))
	require.NoError(t, (<-set).Err())
	require.True(t, conn.watches.on("/l/lock-1"), "the node ahead: the connection's watch")
	require.False(t, h.lasting.on("/l/lock-1"), "not set again on the next connection")
	require.True(t, h.lasting.on("/l/lock-2"), "ours lasts")
	sendThenPing(t, conn, srv, wiretest.Notification(60, int32(zk.EventNodeDeleted), "/l/lock-1"))
	require.Equal(t, zk.Event{Type: zk.EventNodeDeleted, State: 3, Path: "/l/lock-1"}, <-watch)

	set, watch = conn.WatchAndSetWatches("/l/lock-0", 10, "/l/lock-2")
	req = <-reqs
	require.Equal(t, wantSetWatches(10, "/l/lock-0", "/l/lock-2"), req.Body)
	sendThenPing(t, conn, srv,
		wiretest.Notification(70, int32(zk.EventNodeDeleted), "/l/lock-0"), // gone: at once
		wiretest.Header(req.Xid, 70, 0))
	require.Equal(t, zk.Event{Type: zk.EventNodeDeleted, State: 3, Path: "/l/lock-0"}, <-watch)
	require.NoError(t, (<-set).Err())
	require.False(t, conn.watches.on("/l/lock-0"), "fired, and gone")

	_, watch = conn.WatchAndSetWatches("/l/lock-9", 10)
	req = <-reqs
	sendThenPing(t, conn, srv, wiretest.Header(req.Xid, 80, -102)) // NoAuth
	require.False(t, conn.watches.on("/l/lock-9"), "a refused request sets no watch")
	_ = conn.Close()
	select {
	case ev, ok := <-watch:
		t.Fatalf("a watch the server refused heard %+v, %v", ev, ok)
	default:
	}
}
