package wire

import (
	"fmt"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework/internal/wire/wiretest"
)

// sessionOn makes conn's session, answered by a fake server whose requests come on
// the channel returned (read on a goroutine: a pipe's write waits for its read).
func sessionOn(t *testing.T, conn *Conn, srv *wiretest.Conn) <-chan wiretest.Request {
	t.Helper()
	return sessionWithID(t, conn, srv, 7)
}

// sessionWithID is sessionOn with the session id the server answers (0: expired).
func sessionWithID(t *testing.T, conn *Conn, srv *wiretest.Conn, id int64) <-chan wiretest.Request {
	t.Helper()
	reqs := make(chan wiretest.Request, 16)
	go func() {
		if srv.Send(wiretest.ConnectResponse(4000, id)) != nil {
			return
		}
		for {
			r, err := srv.ReadRequest()
			if err != nil {
				close(reqs)
				return
			}
			reqs <- r
		}
	}()
	_, err := readAs(conn)
	require.NoError(t, err)
	return reqs
}

// sendThenPing has the server send packets, then a ping's reply, and has
// go-zookeeper's read take them: the packets before the ping are handled.
func sendThenPing(t *testing.T, conn *Conn, srv *wiretest.Conn, packets ...[]byte) {
	t.Helper()
	go func() {
		for _, p := range packets {
			_ = srv.Send(p)
		}
		_ = srv.Send(wiretest.Header(-2, 0, 0))
	}()
	for {
		p, err := readAs(conn)
		require.NoError(t, err)
		if string(p[4:]) == string(wiretest.Header(-2, 0, 0)) {
			return
		}
	}
}

// exchange makes one of the framework's own calls on a connection whose session is
// up, reads the request as the server does, answers it with code and body, and
// returns the request and the reply the call got.
func exchange(t *testing.T, send func(*Conn) <-chan Reply, code int32, body []byte) (wiretest.Request, Reply) {
	t.Helper()
	req, r, _ := exchangeOn(t, send, code, body)
	return req, r
}

// exchangeOn is exchange that also returns the connection.
func exchangeOn(t *testing.T, send func(*Conn) <-chan Reply, code int32, body []byte) (wiretest.Request, Reply, *Conn) {
	t.Helper()
	conn, server := pipeConn(t)
	srv := &wiretest.Conn{Conn: server}
	reqs := sessionOn(t, conn, srv)
	ch := send(conn)
	req := <-reqs
	sendThenPing(t, conn, srv, append(wiretest.Header(req.Xid, 42, code), body...))
	r, ok := <-ch
	require.True(t, ok, "the call's reply")
	require.True(t, isOurXid(req.Xid), "xid %d in the framework's range", req.Xid)
	return req, r, conn
}

var stat = &zk.Stat{Czxid: 1, Mzxid: 2, Ctime: 3, Mtime: 4, Version: 5, Cversion: 6, Aversion: 7,
	EphemeralOwner: 8, DataLength: 9, NumChildren: 10, Pzxid: 11}

func statBytes(s *zk.Stat) wiretest.Jute {
	return wiretest.Jute(nil).Long(s.Czxid).Long(s.Mzxid).Long(s.Ctime).Long(s.Mtime).
		Int(s.Version).Int(s.Cversion).Int(s.Aversion).Long(s.EphemeralOwner).
		Int(s.DataLength).Int(s.NumChildren).Long(s.Pzxid)
}

// Each call is the request ZooKeeper's protocol defines (checked here byte by byte,
// and against real servers by every framework test), and its reply is read field
// by field.
func TestCallsWriteTheirRequestsAndReadTheirReplies(t *testing.T) {
	t.Run("children", func(t *testing.T) {
		req, r := exchange(t, func(c *Conn) <-chan Reply { return c.Children("/locks") }, 0,
			append(wiretest.Jute(nil).Int(2).Str("lock-1").Str("lock-2"), statBytes(stat)...))
		require.Equal(t, int32(opcodeGetChildren2), req.Opcode)
		require.Equal(t, []byte(wiretest.Jute(nil).Str("/locks")), req.Body[:len(req.Body)-1])
		require.Equal(t, byte(0), req.Body[len(req.Body)-1], "no watch")
		names, s, err := r.ChildrenReply()
		require.NoError(t, err)
		require.Equal(t, []string{"lock-1", "lock-2"}, names)
		require.Equal(t, stat, s)
		// Copies: the body's buffer serves another reply once this one is done.
		overwrite(r.Body)
		require.Equal(t, []string{"lock-1", "lock-2"}, names)
	})
	t.Run("exists", func(t *testing.T) {
		req, r := exchange(t, func(c *Conn) <-chan Reply { return c.Exists("/a") }, 0, statBytes(stat))
		require.Equal(t, int32(opcodeExists), req.Opcode)
		require.Equal(t, append([]byte(wiretest.Jute(nil).Str("/a")), 0), req.Body)
		s, err := r.StatReply()
		require.NoError(t, err)
		require.Equal(t, stat, s)
	})
	t.Run("get", func(t *testing.T) {
		req, r := exchange(t, func(c *Conn) <-chan Reply { return c.Get("/a") }, 0,
			append(wiretest.Jute(nil).Str("value"), statBytes(stat)...))
		require.Equal(t, int32(opcodeGetData), req.Opcode)
		require.Equal(t, append([]byte(wiretest.Jute(nil).Str("/a")), 0), req.Body)
		data, s, err := r.DataReply()
		require.NoError(t, err)
		require.Equal(t, []byte("value"), data)
		require.Equal(t, stat, s)
		// The data is a copy: a slice of the body would keep the stat's bytes alive
		// for as long as a cache keeps the node's data, and the body's buffer serves
		// another reply once this one is done.
		overwrite(r.Body)
		require.Equal(t, []byte("value"), data)
		require.Equal(t, stat, s)
	})
	t.Run("get of a node without data", func(t *testing.T) {
		_, r := exchange(t, func(c *Conn) <-chan Reply { return c.Get("/a") }, 0,
			append(wiretest.Jute(nil).Int(-1), statBytes(stat)...))
		data, _, err := r.DataReply()
		require.NoError(t, err)
		require.Nil(t, data)
	})
	t.Run("set", func(t *testing.T) {
		req, r := exchange(t, func(c *Conn) <-chan Reply { return c.Set("/a", []byte("v"), 3) }, 0, statBytes(stat))
		require.Equal(t, int32(opcodeSetData), req.Opcode)
		require.Equal(t, []byte(wiretest.Jute(nil).Str("/a").Str("v").Int(3)), req.Body)
		s, err := r.StatReply()
		require.NoError(t, err)
		require.Equal(t, stat, s)
	})
	t.Run("delete", func(t *testing.T) {
		req, r := exchange(t, func(c *Conn) <-chan Reply { return c.Delete("/a", -1) }, 0, nil)
		require.Equal(t, int32(opcodeDelete), req.Opcode)
		require.Equal(t, []byte(wiretest.Jute(nil).Str("/a").Int(-1)), req.Body)
		require.NoError(t, r.Err())
	})
	t.Run("create", func(t *testing.T) {
		acl := zk.WorldACL(zk.PermAll)
		req, r := exchange(t, func(c *Conn) <-chan Reply {
			return c.Create("/l/lock-", nil, acl, zk.FlagEphemeral|zk.FlagSequence)
		}, 0, wiretest.Jute(nil).Str("/l/lock-0000000001"))
		require.Equal(t, int32(opcodeCreate), req.Opcode)
		want := wiretest.Jute(nil).Str("/l/lock-").Int(-1). // nil data: jute's null buffer, as go-zookeeper writes it
									Int(1).Int(zk.PermAll).Str("world").Str("anyone").Int(zk.FlagEphemeral | zk.FlagSequence)
		require.Equal(t, []byte(want), req.Body)
		p, err := r.PathReply()
		require.NoError(t, err)
		require.Equal(t, "/l/lock-0000000001", p)
		require.Equal(t, int64(42), r.Zxid, "the create's zxid: the node's czxid")
		overwrite(r.Body)
		require.Equal(t, "/l/lock-0000000001", p, "a copy")
	})
}

// overwrite fills b as another reply read into its buffer would.
func overwrite(b []byte) {
	for i := range b {
		b[i] = 'x'
	}
}

// A reply's body has its length; one of middling size is read into the
// connection's spare buffer once the last reply read there is done, and the spare
// is one buffer, never larger than maxSpareBody.
func TestAReplysBodyAndTheSpare(t *testing.T) {
	var s spareBody
	for _, n := range []int{1, smallBody, maxSpareBody + 1} {
		b, buf := s.body(n)
		require.Len(t, b, n)
		require.Nil(t, buf, "%d bytes: not the spare's", n)
	}
	b, buf := s.body(2000)
	require.Len(t, b, 2000)
	r := Reply{Body: b, buf: buf, spare: &s}
	r.Done()
	again, _ := s.body(1500)
	require.Len(t, again, 1500)
	require.Same(t, &b[0], &again[0], "the spare, once the reply was done")
	_, notDone := s.body(1500)
	require.NotSame(t, buf, notDone, "the spare is taken until its reply is done")
	Reply{buf: notDone, spare: &s}.Done()
	Reply{buf: buf, spare: &s}.Done() // the spare is there: this one is dropped
	require.Same(t, notDone, s.p.Load())
	big, _ := s.body(maxSpareBody)
	require.Len(t, big, maxSpareBody)
	require.LessOrEqual(t, cap(big), maxSpareBody)
}

// A reply's error code is go-zookeeper's error of that code, as a call of
// go-zookeeper's would have returned it, so that the framework reads both alike.
func TestAReplysCodeIsGoZookeepersError(t *testing.T) {
	for code, want := range map[int32]error{-101: zk.ErrNoNode, -110: zk.ErrNodeExists, -103: zk.ErrBadVersion,
		-102: zk.ErrNoAuth, -111: zk.ErrNotEmpty, -118: zk.ErrSessionMoved} {
		_, r := exchange(t, func(c *Conn) <-chan Reply { return c.Delete("/a", 1) }, code, nil)
		require.ErrorIs(t, r.Err(), want, "code %d", code)
	}
	_, r := exchange(t, func(c *Conn) <-chan Reply { return c.Delete("/a", 1) }, -124, nil)
	require.EqualError(t, r.Err(), "unknown error: -124", "as go-zookeeper words a code it has no value for")
	_, _, err := Reply{Code: -101}.ChildrenReply()
	require.ErrorIs(t, err, zk.ErrNoNode, "a decoder says the code first")
}

// A reply that is not the shape of its request's fails the request with ErrReply,
// whatever its bytes: never a panic, nor a listing of more names than it has bytes.
func TestARepliesThatDoNotDecodeFailTheirRequest(t *testing.T) {
	short := statBytes(stat)[:statSize-1]
	_, err := Reply{Body: short}.StatReply()
	require.ErrorIs(t, err, ErrReply)
	_, _, err = Reply{Body: append(wiretest.Jute(nil).Str("v"), short...)}.DataReply()
	require.ErrorIs(t, err, ErrReply)
	_, _, err = Reply{Body: wiretest.Jute(nil).Int(1 << 30)}.ChildrenReply()
	require.ErrorIs(t, err, ErrReply, "a listing of 2^30 names in 4 bytes")
	_, _, err = Reply{Body: append(wiretest.Jute(nil).Int(-1), statBytes(stat)...)}.ChildrenReply()
	require.ErrorIs(t, err, ErrReply)
	_, err = Reply{Body: wiretest.Jute(nil).Int(9).Str("ab")}.PathReply()
	require.ErrorIs(t, err, ErrReply)
}

// A create of the framework's own is followed as go-zookeeper's are: its writing is
// heard, and its reply's zxid is the node's czxid.
func TestOurCreatesAreFollowed(t *testing.T) {
	conn, server := pipeConn(t)
	creates := &Creates{}
	conn.h.cfg.Creates = creates
	written := make(chan struct{})
	f := creates.Follow("/l/lock-", wroteFunc(func() { close(written) }))
	srv := &wiretest.Conn{Conn: server}
	reqs := sessionOn(t, conn, srv)
	ch := conn.Create("/l/lock-", nil, zk.WorldACL(zk.PermAll), zk.FlagEphemeral)
	req := <-reqs
	<-written
	sendThenPing(t, conn, srv, append(wiretest.Header(req.Xid, 77, 0), wiretest.Jute(nil).Str("/l/lock-")...))
	<-ch
	require.Equal(t, int64(77), f.Zxid())
}

type wroteFunc func()

func (f wroteFunc) Wrote() { f() }

// A call whose connection ends before its reply hears that no reply will come: its
// channel closes.
func TestACallWhoseConnectionEndsIsClosed(t *testing.T) {
	conn, server := pipeConn(t)
	reqs := sessionOn(t, conn, &wiretest.Conn{Conn: server})
	ch := conn.Exists("/a")
	<-reqs
	_ = server.Close()
	_, err := readAs(conn)
	require.Error(t, err, "the connection ended")
	_, ok := <-ch
	require.False(t, ok)
}

// The zxid of a call's reply is go-zookeeper's last zxid, as if go-zookeeper had read
// the reply: it connects again with it, so that no server with less history takes
// the session (lastzxid.go).
func TestACallsZxidIsGoZookeepersLast(t *testing.T) {
	var zc zk.Conn
	conn, server := pipeConn(t)
	conn.h.Follow(&zc)
	srv := &wiretest.Conn{Conn: server}
	reqs := sessionOn(t, conn, srv)
	ch := conn.Exists("/a")
	req := <-reqs
	sendThenPing(t, conn, srv, append(wiretest.Header(req.Xid, 99, 0), statBytes(stat)...))
	<-ch
	require.Equal(t, int64(99), *goZookeeperLastZxid(&zc))
	require.True(t, conn.h.Direct())
}

// A reply of ours is read into a buffer of its own: the connection keeps none the
// size of the largest it has read (each session's copy of a lock's listing of every
// waiter, in the scale benchmark).
func TestALargeReplyOfOursLeavesNoBufferBehind(t *testing.T) {
	listing := wiretest.Jute(nil).Int(1000)
	for i := range 1000 {
		listing = listing.Str(fmt.Sprintf("_c_0f8fad5b-d9cb-469f-a165-70867728950e-lock-%010d", i))
	}
	_, r, conn := exchangeOn(t, func(c *Conn) <-chan Reply { return c.Children("/locks") }, 0,
		append(listing, statBytes(stat)...))
	names, _, err := r.ChildrenReply()
	require.NoError(t, err)
	require.Len(t, names, 1000)
	require.Less(t, cap(conn.buf), 1024, "the connection's packet buffer after a reply of %d bytes", len(r.Body))
}
