package wire

import (
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework/internal/wire/wiretest"
)

// getDataReply is the server's answer to getData request xid, at zxid: no data (-1),
// and stat.
func getDataReply(xid int32, zxid int64) []byte {
	return append(wiretest.Header(xid, zxid, 0), append(wiretest.Jute(nil).Int(-1), statBytes(stat)...)...)
}

// A data watch of the framework's own is set by its getData, with the watch flag,
// and hears the next change of its node's data or its deletion once; the
// notification reaches go-zookeeper too.
func TestAConnectionsDataWatchHearsItsNodeOnce(t *testing.T) {
	conn, server := pipeConn(t)
	srv := &wiretest.Conn{Conn: server}
	reqs := sessionOn(t, conn, srv)
	reply, watch := conn.GetW("/l/lock-1")
	req := <-reqs
	require.Equal(t, int32(opcodeGetData), req.Opcode)
	require.Equal(t, append([]byte(wiretest.Jute(nil).Str("/l/lock-1")), 1), req.Body, "the watch asked for")
	sendThenPing(t, conn, srv, getDataReply(req.Xid, 5))
	r := <-reply
	require.NoError(t, r.Err())
	require.True(t, conn.watches.on("/l/lock-1"))

	notification := wiretest.Notification(6, int32(zk.EventNodeDeleted), "/l/lock-1")
	go func() { _ = srv.Send(notification); _ = srv.Send(notification) }()
	for range 2 {
		p, err := readAs(conn)
		require.NoError(t, err)
		require.Equal(t, []byte(notification), p[4:], "go-zookeeper hears the notification too")
	}
	require.Equal(t, zk.Event{Type: zk.EventNodeDeleted, State: 3, Path: "/l/lock-1"}, <-watch)
	require.False(t, conn.watches.on("/l/lock-1"), "fired once, and gone")
	select {
	case ev, ok := <-watch:
		t.Fatalf("heard again: %+v %v", ev, ok)
	default:
	}
}

// A getData that fails (no such node) sets no watch, and leaves none of ours.
func TestAFailedGetDataLeavesNoDataWatch(t *testing.T) {
	conn, server := pipeConn(t)
	srv := &wiretest.Conn{Conn: server}
	reqs := sessionOn(t, conn, srv)
	_, _ = conn.GetW("/gone") // a watch of the same path that stays
	kept := <-reqs
	reply, watch := conn.GetW("/gone")
	failed := <-reqs
	sendThenPing(t, conn, srv,
		getDataReply(kept.Xid, 5),
		wiretest.Header(failed.Xid, 5, codeNoNode))
	require.ErrorIs(t, (<-reply).Err(), zk.ErrNoNode)
	conn.watches.mu.Lock()
	require.Len(t, conn.watches.byPath[watchOn{"/gone", false}], 1, "the failed one's dropped, the other's kept")
	require.NotEqual(t, (<-chan zk.Event)(conn.watches.byPath[watchOn{"/gone", false}][0]), watch)
	conn.watches.mu.Unlock()
}

// The connection's end ends its data watches: their channels close, unheard.
func TestAConnectionsEndClosesItsDataWatches(t *testing.T) {
	conn, server := pipeConn(t)
	srv := &wiretest.Conn{Conn: server}
	reqs := sessionOn(t, conn, srv)
	_, watch := conn.GetW("/l/lock-1")
	<-reqs
	_ = server.Close()
	_, err := readAs(conn)
	require.Error(t, err)
	_, ok := <-watch
	require.False(t, ok, "closed without an event")
	_, late := conn.GetW("/l/lock-2")
	_, ok = <-late
	require.False(t, ok, "a watch asked of an ended connection is ended")
}

// On a path the persistent watches hold, a data watch of ours is followed by the
// persistent watch again (a 3.8 server lets a one-shot watch replace it), and a
// persistent watch removed from a 3.8 server leaves the path alone while ours is on it.
func TestADataWatchKeepsAPersistentWatchOnItsPath(t *testing.T) {
	conn, server := pipeConn(t)
	srv := &wiretest.Conn{Conn: server}
	watches := conn.h.cfg.Watches
	reqs := sessionOn(t, conn, srv)
	_, err := watches.Add(&Watch{Path: "/p", Mode: Persistent, Deliver: func(Event) {}, End: func() {}})
	require.NoError(t, err)
	require.Equal(t, int32(opcodeAddWatch), (<-reqs).Opcode)
	_, _ = conn.GetW("/p")
	require.Equal(t, int32(opcodeGetData), (<-reqs).Opcode)
	again := <-reqs
	require.Equal(t, int32(opcodeAddWatch), again.Opcode, "the persistent watch again, after ours")
	require.Equal(t, []byte(addWatchBody("/p", Persistent)), again.Body)

	watches.mu.Lock()
	require.Nil(t, watches.removeAll(conn, "/p"), "nothing removed while our watch is on the path")
	watches.mu.Unlock()
}

// A notification reaches a data watch of ours only once go-zookeeper has taken it in
// (its next read): a lock's holder hears its node's deletion through go-zookeeper
// (Client.OnWatchEvent) before a waiter of the same client, woken by its watch on
// that node, can be granted the lock.
func TestADataWatchHearsANotificationAfterGoZookeeper(t *testing.T) {
	conn, server := pipeConn(t)
	srv := &wiretest.Conn{Conn: server}
	reqs := sessionOn(t, conn, srv)
	reply, watch := conn.GetW("/l/lock-1")
	req := <-reqs
	sendThenPing(t, conn, srv, getDataReply(req.Xid, 5))
	require.NoError(t, (<-reply).Err())

	notification := wiretest.Notification(6, int32(zk.EventNodeDeleted), "/l/lock-1")
	go func() { _ = srv.Send(notification); _ = srv.Send(wiretest.Header(-2, 0, 0)) }()
	p, err := readAs(conn)
	require.NoError(t, err)
	require.Equal(t, []byte(notification), p[4:], "go-zookeeper has it")
	select {
	case ev := <-watch:
		t.Fatalf("heard before go-zookeeper had handled it: %+v", ev)
	default:
	}
	_, err = readAs(conn) // go-zookeeper's next read: it has handled the notification
	require.NoError(t, err)
	require.Equal(t, zk.EventNodeDeleted, (<-watch).Type)
}

// A create and the listing sent with it are written in one batch, the create first,
// and answered in that order; the listing may set a child watch of the connection's
// own, which hears the next change of the children once go-zookeeper has the
// notification. Without the watch flag, none is left.
func TestACreateThenItsListing(t *testing.T) {
	for _, watch := range []bool{false, true} {
		conn, server := pipeConn(t)
		srv := &wiretest.Conn{Conn: server}
		reqs := sessionOn(t, conn, srv)
		acl := zk.WorldACL(zk.PermAll)
		created, listed, children := conn.CreateThenList("/l/lock-", []byte("id"), acl, zk.FlagEphemeral|zk.FlagSequence, "/l", watch)
		create, list := <-reqs, <-reqs
		require.Equal(t, int32(opcodeCreate), create.Opcode, "the create first")
		require.Equal(t, int32(opcodeGetChildren2), list.Opcode, "then the listing")
		flag := byte(0)
		if watch {
			flag = 1
		}
		require.Equal(t, append([]byte(wiretest.Jute(nil).Str("/l")), flag), list.Body)
		require.Equal(t, watch, conn.watches.on("/l"), "a child watch of ours, if asked for")
		sendThenPing(t, conn, srv,
			append(wiretest.Header(create.Xid, 9, 0), wiretest.Jute(nil).Str("/l/lock-0000000001")...),
			append(wiretest.Header(list.Xid, 9, 0), append(wiretest.Jute(nil).Int(1).Str("lock-0000000001"), statBytes(stat)...)...))
		p, err := (<-created).PathReply()
		require.NoError(t, err)
		require.Equal(t, "/l/lock-0000000001", p)
		names, _, err := (<-listed).ChildrenReply()
		require.NoError(t, err)
		require.Equal(t, []string{"lock-0000000001"}, names)
		if !watch {
			_, ok := <-children
			require.False(t, ok, "no watch: closed")
			continue
		}
		sendThenPing(t, conn, srv, wiretest.Notification(10, int32(zk.EventNodeChildrenChanged), "/l"))
		require.Equal(t, zk.Event{Type: zk.EventNodeChildrenChanged, State: 3, Path: "/l"}, <-children)
		require.False(t, conn.watches.on("/l"), "fired once, and gone")
	}
}

// A batch's first reply is handed out once the last has come, so that its caller,
// waiting on the first and then reading the last, wakes once; a connection that ends
// between them still hands out the first, which came, and closes the last's.
func TestABatchsFirstReplyWaitsForItsLast(t *testing.T) {
	createReply := func(xid int32) []byte {
		return append(wiretest.Header(xid, 9, 0), wiretest.Jute(nil).Str("/l/lock-0000000001")...)
	}
	handedOut := func(t *testing.T, ch <-chan Reply) Reply {
		t.Helper()
		select {
		case r, ok := <-ch:
			require.True(t, ok, "a reply, not the channel's close")
			return r
		default:
			t.Fatal("the reply is not handed out")
			return Reply{}
		}
	}
	pending := func(ch <-chan Reply) bool {
		select {
		case <-ch:
			return false
		default:
			return true
		}
	}
	t.Run("a create and its listing", func(t *testing.T) {
		conn, server := pipeConn(t)
		srv := &wiretest.Conn{Conn: server}
		reqs := sessionOn(t, conn, srv)
		created, listed, _ := conn.CreateThenList("/l/lock-", nil, zk.WorldACL(zk.PermAll), zk.FlagEphemeral|zk.FlagSequence, "/l", false)
		create, list := <-reqs, <-reqs
		sendThenPing(t, conn, srv, createReply(create.Xid))
		require.True(t, pending(created), "the create's reply, before the listing's came")
		sendThenPing(t, conn, srv, append(wiretest.Header(list.Xid, 9, 0), append(wiretest.Jute(nil).Int(0), statBytes(stat)...)...))
		require.False(t, pending(listed), "the listing's reply, with the create's")
		p, err := handedOut(t, created).PathReply()
		require.NoError(t, err)
		require.Equal(t, "/l/lock-0000000001", p)
	})
	t.Run("a read and its setWatches", func(t *testing.T) {
		conn, server := pipeConn(t)
		srv := &wiretest.Conn{Conn: server}
		reqs := sessionOn(t, conn, srv)
		got, _, set := conn.GetWAndSetWatches("/l/lock-0000000001", 9, "/l/lock-0000000002")
		get, setw := <-reqs, <-reqs
		require.Equal(t, int32(opcodeSetWatches), setw.Opcode)
		sendThenPing(t, conn, srv, append(wiretest.Header(get.Xid, 9, 0), append(wiretest.Jute(nil).Str("x"), statBytes(stat)...)...))
		require.True(t, pending(got), "the read's reply, before the setWatches'")
		sendThenPing(t, conn, srv, wiretest.Header(setw.Xid, 9, 0))
		require.False(t, pending(set), "the setWatches' reply, with the read's")
		data, _, err := handedOut(t, got).DataReply()
		require.NoError(t, err)
		require.Equal(t, []byte("x"), data)
	})
	t.Run("an end between them", func(t *testing.T) {
		conn, server := pipeConn(t)
		srv := &wiretest.Conn{Conn: server}
		reqs := sessionOn(t, conn, srv)
		created, listed, _ := conn.CreateThenList("/l/lock-", nil, zk.WorldACL(zk.PermAll), zk.FlagEphemeral|zk.FlagSequence, "/l", false)
		create := <-reqs
		<-reqs
		sendThenPing(t, conn, srv, createReply(create.Xid))
		require.True(t, pending(created), "held")
		require.NoError(t, server.Close())
		_, err := readAs(conn)
		require.Error(t, err, "the connection ended")
		_, err = handedOut(t, created).PathReply()
		require.NoError(t, err)
		_, ok := <-listed
		require.False(t, ok, "the listing's: closed")
	})
}
