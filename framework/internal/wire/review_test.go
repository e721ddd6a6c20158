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

// Review: go-zookeeper v1.0.4 abandons, without closing it, a connection whose
// connect response says the session expired (loop: authenticate returns
// ErrSessionExpired, and connect replaces c.conn). A call of the framework's that
// was written on that connection (framework.attemptDirect takes h.net, the
// connection being made, while the client's state still says Connected) waits
// behind a gate that never opens, on a connection that never ends: its reply
// channel never closes. A caller without a deadline waits for good, and
// handle.close waits for it (h.users.Wait), so Client.Close hangs; an undo's
// cleanUp reading it leaks, and Close waits for that too (<-idle).
func TestReviewACallOnAConnectionWhoseSessionExpiredEnds(t *testing.T) {
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
