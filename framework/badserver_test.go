package framework

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework/internal/wire"
	"github.com/zkrecipes/zkrecipes/framework/internal/wire/wiretest"
)

// A server that grants a session timeout of 0 would make go-zookeeper's ping ticker
// panic (time.NewTicker), ending the whole process: the connection is refused, and
// the wait for a connection says why.
func TestAConnectResponseWithoutASessionTimeoutIsRefused(t *testing.T) {
	t.Parallel()
	addr := wiretest.Start(t, func(conn *wiretest.Conn) {
		_ = conn.Accept(0, 7)
		_, _ = conn.ReadPacket() // until the client hangs up
	})
	c, err := New([]string{addr}, WithConnectionTimeout(time.Second))
	require.NoError(t, err)
	defer c.Close()
	err = c.WaitConnected(context.Background())
	var ce *ConnectError
	require.ErrorAs(t, err, &ce)
	require.ErrorIs(t, err, wire.ErrProtocol)
	require.ErrorContains(t, err, "a session timeout of 0 ms granted")
}

// An HTTP server at the address answers ZooKeeper's connect request with a 400,
// whose first bytes ("HTTP") read as a length of 1213486160: the wait for a
// connection says that the server did not answer as ZooKeeper does, and what it
// sent. (net/http answers once it has read a line: a session timeout of 2570 ms,
// 0x0a0a, puts a newline in the connect request.)
func TestAnHTTPServerAtTheAddressIsNamed(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	c, err := New([]string{srv.Listener.Addr().String()}, WithConnectionTimeout(time.Second),
		WithSessionTimeout(2570*time.Millisecond))
	require.NoError(t, err)
	defer c.Close()
	err = c.WaitConnected(context.Background())
	require.ErrorContains(t, err, "did not answer as ZooKeeper does (an HTTP server?): it sent \"HTTP/1.1 400 Bad Request")
	require.ErrorContains(t, err, "1213486160 bytes")
}
