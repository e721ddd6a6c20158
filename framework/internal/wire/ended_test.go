package wire

import (
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework/internal/wire/wiretest"
)

type quiet struct{}

func (quiet) Printf(string, ...any) {}

// go-zookeeper v1.0.4 abandons, without closing it, a connection whose
// connect response says the session expired (loop: authenticate returns
// ErrSessionExpired, and connect replaces c.conn). A call of the framework's that
// was written on that connection (framework.attemptDirect takes h.net, the
// connection being made, while the client's state still says Connected) waits
// behind a gate that never opens, on a connection that never ends: its reply
// channel never closes. A caller without a deadline waits for good, and
// handle.close waits for it (h.users.Wait), so Client.Close hangs; an undo's
// cleanUp reading it leaks, and Close waits for that too (<-idle). The connection
// now ends at that connect response.
func TestACallOnAConnectionWhoseSessionExpiredEnds(t *testing.T) {
	h := testHandle(t, nil)
	called := make(chan struct{})
	var n atomic.Int32
	addr := wiretest.Start(t, func(c *wiretest.Conn) {
		switch n.Add(1) {
		case 1:
			_ = c.Accept(4000, 7) // then hang up: go-zookeeper connects again
		case 2:
			if _, err := c.ReadPacket(); err != nil {
				return
			}
			<-called
			_ = c.Send(wiretest.ConnectResponse(4000, 0)) // the session has expired
		default:
			if c.Accept(4000, 8) == nil {
				c.Serve(func(wiretest.Request) bool { return true })
			}
		}
	})
	conns := make(chan *Conn, 8)
	zc, _, err := zk.Connect([]string{addr}, 4*time.Second, zk.WithLogger(quiet{}),
		zk.WithDialer(func(network, a string, timeout time.Duration) (net.Conn, error) {
			nc, err := net.DialTimeout(network, a, timeout)
			if err != nil {
				return nil, err
			}
			c := h.NewConn(nc, a, "127.0.0.1")
			conns <- c
			return c, nil
		}))
	require.NoError(t, err)
	defer zc.Close()
	h.Follow(zc)
	<-conns                   // session 7
	b := <-conns              // go-zookeeper connects again
	reply := b.Children("/x") // queued behind the gate until the connect response
	close(called)
	<-conns // the session had expired: go-zookeeper is on a new connection, for a new session
	select {
	case r, ok := <-reply:
		require.False(t, ok, "no reply can come: %+v", r)
	case <-time.After(10 * time.Second):
		t.Fatal("a call on a connection whose session expired never ends: its connection is never closed")
	}
}

// A call made once reading has ended (a packet that broke the protocol
// dropped the connection; go-zookeeper closes it a moment later) gets its closed
// channel, but request sends its packet all the same: call returned before writing
// the length and xid, so the server is sent a packet of length 0, xid 0, then the
// opcode and body read as the next packets' lengths.
func TestACallOnAnEndedConnectionWritesNothing(t *testing.T) {
	conn, server := pipeConn(t)
	written := make(chan []byte, 64)
	go func() {
		_, _ = server.Write(packet(wiretest.ConnectResponse(4000, 7)))
		for {
			b := make([]byte, 256)
			n, err := server.Read(b) // a pipe's write returns once read whole
			if err != nil {
				close(written)
				return
			}
			written <- b[:n]
		}
	}()
	_, err := readAs(conn) // the connect response: the gate opens
	require.NoError(t, err)
	_ = conn.Exists("/probe")
	<-written                                                             // the gate is open: the probe was written
	go func() { _, _ = server.Write(wiretest.Jute(nil).Int(1).Int(0)) }() // shorter than a reply's header
	_, err = readAs(conn)
	require.ErrorIs(t, err, ErrProtocol)
	ch := conn.Children("/x") // returns once what it wrote, if anything, was read
	_, ok := <-ch
	require.False(t, ok, "the connection had ended")
	_ = conn.Conn.Close()
	var all []byte
	for b := range written {
		all = append(all, b...)
	}
	require.Empty(t, all, "written to the server after reading ended")
}
