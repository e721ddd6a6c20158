package wire

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"log/slog"
	"net"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// go-zookeeper reads the body of a reply to one of its requests itself, from the
// connection: the connection keeps no copy of the largest reply it has passed on
// (each session queued on a lock kept one of the lock's listing, 1.3 KB a waiter of
// a thousand over twenty sessions), and the packets around it come whole and in
// order. In race builds, a reply held for zk#35 is read whole first, and comes whole.
func TestAReplysBodyIsReadByGoZookeeperAndNotKept(t *testing.T) {
	conn, server := pipeConn(t)

	big := make([]byte, 256<<10)
	for i := range big {
		big[i] = byte(i * 7)
	}
	packet := func(xid int32, zxid int64, body []byte) []byte {
		return append(jute(nil).int(int32(16+len(body))).int(xid).long(zxid).int(0), body...)
	}
	// A connect response: protocol version, timeout, session 7, password. (An
	// expired session's, 0, would end the connection.)
	connect := append(jute(nil).int(36).int(0).int(4000).long(7).int(16), make([]byte, 16)...)
	packets := [][]byte{
		connect,
		packet(1, 10, jute(nil).int(int32(len(big))).long(0)), // a small reply
		packet(2, 11, append(jute(nil).int(int32(len(big))), big...)),
		packet(-2, 0, nil), // a ping's reply
		packet(3, 12, append(jute(nil).int(int32(len(big))), big...)),
	}
	go func() {
		for _, p := range packets {
			if _, err := server.Write(p); err != nil {
				return
			}
		}
	}()
	// read reads one packet as go-zookeeper does: its length, then the rest.
	read := func() []byte {
		t.Helper()
		size := make([]byte, 4, 64)
		_, err := io.ReadFull(conn, size)
		require.NoError(t, err)
		p := append(size, make([]byte, binary.BigEndian.Uint32(size))...)
		_, err = io.ReadFull(conn, p[4:])
		require.NoError(t, err)
		return p
	}
	for i, want := range packets {
		if i == len(packets)-1 {
			conn.hold.begin(true) // race builds: this reply is held, until SetWatches
			conn.hold.wroteSetWatches()
			require.Equal(t, holdReplies, conn.hold.holding())
		}
		require.Equal(t, want, read(), "packet %d", i)
		require.Less(t, cap(conn.buf), 1024, "the connection's buffer, after packet %d", i)
	}
	require.False(t, conn.hold.holding(), "a hold once a reply came")
}

// pipeConn is a connection as go-zookeeper sees it, over a pipe whose other end, the
// server's, is returned.
func pipeConn(t *testing.T) (*Conn, net.Conn) {
	server, client := net.Pipe()
	t.Cleanup(func() { _ = server.Close(); _ = client.Close() })
	return testHandle(t, nil).NewConn(client, "pipe", "pipe"), server
}

// testHandle is a handle as the framework makes it, with a maximum packet of 1 MiB,
// followed by watches (nil: watches of its own).
func testHandle(t *testing.T, watches *Watches) *Handle {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	log := slog.New(slog.DiscardHandler)
	if watches == nil {
		watches = NewWatches(log)
	}
	h := NewHandle(Config{Ctx: ctx, Log: log, MaxPacket: 1 << 20, Handshake: time.Minute,
		Watches: watches, Failed: func(string, int, error) {}, Answered: func() {}})
	watches.Follow(h)
	return h
}

// go-zookeeper writes first, on a new connection, the requests it had queued on the
// last one and not written: a SetWatches among them was built before the session was
// back, and must not end the new connection's hold; the first SetWatches numbered
// after it does.
func TestAnEarlierConnectionsSetWatchesEndsNoHold(t *testing.T) {
	if !holdReplies {
		t.Skip("replies are held in race builds only")
	}
	conn, server := pipeConn(t)
	go func() { _, _ = io.Copy(io.Discard, server) }()
	var count uint32 = 1<<31 + 41 // go-zookeeper's count, past a wrap of its 31-bit xids
	conn.h.xids.counter.Store(&count)
	conn.answered = true
	conn.hold.begin(true)   // the session is back, with watches to set again
	conn.h.xids.connected() // then go-zookeeper builds its SetWatches

	setWatches := func(xid int32) {
		t.Helper()
		_, err := conn.Write(frame(xid, opcodeSetWatches, jute(nil).long(7).int(0).int(0).int(1).str("/w")))
		require.NoError(t, err)
	}
	released := func() bool {
		select {
		case <-conn.hold.released:
			return true
		default:
			return false
		}
	}
	setWatches(41) // numbered before: the last connection's
	require.False(t, released(), "the hold after an earlier connection's SetWatches")
	count++
	setWatches(42)
	require.True(t, released(), "the hold after this connection's SetWatches")
}

// A burst of small packets is read from the connection in one call, not one call
// for a packet's length, one for its header and one for its body, as go-zookeeper
// and the header's check ask for them: three system calls a reply were most of what
// the connection layer cost a request. The packets still come whole and in order.
func TestABurstOfPacketsIsOneReadFromTheConnection(t *testing.T) {
	server, client := net.Pipe()
	t.Cleanup(func() { _ = server.Close(); _ = client.Close() })
	counted := &countingConn{Conn: client}
	conn := testHandle(t, nil).NewConn(counted, "pipe", "pipe")

	connect := []byte(append(jute(nil).int(36).int(0).int(4000).long(7).int(16), make([]byte, 16)...))
	burst := [][]byte{
		append(jute(nil).int(16+12).int(1).long(10).int(0), jute(nil).int(3).long(0)...), // a reply with a body
		jute(nil).int(16).int(-2).long(0).int(0),                                         // a ping's reply
		append(jute(nil).int(16+12).int(2).long(11).int(0), jute(nil).int(4).long(1)...),
	}
	go func() {
		if _, err := server.Write(connect); err != nil {
			return
		}
		_, _ = server.Write(slices.Concat(burst...)) // one write: what one read can take
	}()
	p, err := readAs(conn)
	require.NoError(t, err)
	require.Equal(t, connect, p)
	before := counted.reads.Load()
	for i, want := range burst {
		p, err := readAs(conn)
		require.NoError(t, err)
		require.Equal(t, want, p, "packet %d", i)
	}
	require.Equal(t, int32(1), counted.reads.Load()-before, "reads of the connection for the burst")
	require.False(t, conn.h.LastRead().IsZero())
}

// countingConn counts the reads of a connection.
type countingConn struct {
	net.Conn
	reads atomic.Int32
}

func (c *countingConn) Read(p []byte) (int, error) {
	c.reads.Add(1)
	return c.Conn.Read(p)
}

// Reading a reply, and writing a read that sets no watch, allocate nothing in the
// connection layer: it sits under every request, and what it allocated (a packet's
// length, a path nobody keeps) was paid on every one.
func TestTheConnectionLayerAllocatesNothingPerRequest(t *testing.T) {
	connect := append(jute(nil).int(36).int(0).int(4000).long(7).int(16), make([]byte, 16)...)
	reply := append(jute(nil).int(16+12).int(1).long(10).int(0), jute(nil).int(3).long(0)...)
	const n = 200
	stream := bytes.NewReader(append(connect, bytes.Repeat(reply, n+1)...))
	conn := testHandle(t, nil).NewConn(replayConn{stream}, "replay", "replay")
	buf := make([]byte, 64)
	read := func() {
		if _, err := io.ReadFull(conn, buf[:4]); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(conn, buf[:binary.BigEndian.Uint32(buf)]); err != nil {
			t.Fatal(err)
		}
	}
	read() // the connect response
	require.Zero(t, testing.AllocsPerRun(n, read), "allocations per reply read")

	children := frame(1, opcodeGetChildren2, append(jute(nil).str("/locks/a"), 0)) // no watch
	require.Zero(t, testing.AllocsPerRun(100, func() { requestPath(children) }), "allocations per read with no watch")
}

// replayConn is a connection whose server's bytes are stream's.
type replayConn struct{ stream *bytes.Reader }

func (c replayConn) Read(p []byte) (int, error)     { return c.stream.Read(p) }
func (replayConn) Write(p []byte) (int, error)      { return len(p), nil }
func (replayConn) Close() error                     { return nil }
func (replayConn) LocalAddr() net.Addr              { return nil }
func (replayConn) RemoteAddr() net.Addr             { return nil }
func (replayConn) SetDeadline(time.Time) error      { return nil }
func (replayConn) SetReadDeadline(time.Time) error  { return nil }
func (replayConn) SetWriteDeadline(time.Time) error { return nil }
