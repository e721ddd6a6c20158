package framework

import (
	"context"
	"encoding/binary"
	"io"
	"net"
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
	// The connect response of an expired session (so that nothing else is set up):
	// protocol version, timeout, session 0, password.
	connect := append(jute(nil).int(36).int(0).int(4000).long(0).int(16), make([]byte, 16)...)
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
func pipeConn(t *testing.T) (*trackedConn, net.Conn) {
	server, client := net.Pipe()
	t.Cleanup(func() { _ = server.Close(); _ = client.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c := &core{opts: options{maxPacket: DefaultMaxPacketSize}}
	c.watches = &persistentWatches{c: c}
	return newTrackedConn(c, &handle{ctx: ctx}, client, "pipe", time.Minute), server
}
