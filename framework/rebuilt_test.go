package framework

import (
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/zktest"
)

// TestRebuiltEnsemble replaces the server behind a client's address by a fresh one,
// whose zxids are below those the client has seen: the server refuses the old
// session's reconnections, the client finds out why with a probe and gives the
// session up at once (not after its session timeout, a minute, longer than the
// test waits), and its new session, on the fresh server, is published after
// Rebuilt; both are logged. A later reconnection in the new history is no rebuild.
func TestRebuiltEnsemble(t *testing.T) {
	t.Parallel()
	old, fresh := zktest.NewServer(t, longSessions), zktest.NewServer(t, longSessions)
	proxy := zktest.NewProxy(t, old.Addr())
	logs := &logBuffer{}
	c := newClient(t, []string{proxy.Addr()}, WithSessionTimeout(time.Minute), WithLogger(slog.New(logs.handler())))
	ctx := testCtx(t)
	for i := range 10 { // history the fresh server will not have
		_, err := c.Create(ctx, fmt.Sprintf("/n%d", i), nil)
		require.NoError(t, err)
	}
	l := listen(c)
	proxy.SetTarget(fresh.Addr())
	cut := time.Now()
	proxy.Cut()
	proxy.Restore()
	l.waitFor(t, Suspended, Lost, Rebuilt, Reconnected)
	t.Logf("Rebuilt %v after the cut (session timeout %v)", time.Since(cut), c.NegotiatedSessionTimeout())
	require.Contains(t, logs.String(), "the server refuses the session: it has less history than this client has seen")
	require.Contains(t, logs.String(), "the ensemble has less history than this client has seen")

	_, err := c.Create(ctx, "/after", nil)
	require.NoError(t, err)
	proxy.Cut()
	proxy.Restore()
	l.waitFor(t, Suspended, Lost, Rebuilt, Reconnected, Suspended, Reconnected)
}

// A server that reads the connect request and closes the connection without a
// word, as one not serving yet does, is no rebuilt ensemble: the probe learns
// nothing from it, and the session waits for the server and comes back.
func TestAServerNotServingIsNoRebuild(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t, longSessions)
	proxy := zktest.NewProxy(t, srv.Addr())
	logs := &logBuffer{}
	c := newClient(t, []string{proxy.Addr()}, WithSessionTimeout(time.Minute), WithLogger(slog.New(logs.handler())))
	_, err := c.Create(testCtx(t), "/n", nil) // a history the connect requests then carry
	require.NoError(t, err)
	session := c.SessionID()
	l := listen(c)

	proxy.SetTarget(notServing(t))
	proxy.Cut()
	proxy.Restore()
	l.waitFor(t, Suspended)
	require.Eventually(t, func() bool {
		return strings.Contains(logs.String(), "a server closed the connection without answering")
	}, wait, 10*time.Millisecond, "no probe decided")
	proxy.SetTarget(srv.Addr())
	l.waitFor(t, Suspended, Reconnected)
	require.Equal(t, session, c.SessionID())
	require.NotContains(t, logs.String(), "the server refuses the session")
	require.NotContains(t, logs.String(), "the ensemble has less history")
}

// notServing is the address of a server that reads each connection's first packet
// and closes it, as a ZooKeeper not serving yet does.
func notServing(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var conns sync.WaitGroup
	t.Cleanup(func() { _ = l.Close(); conns.Wait() })
	conns.Add(1)
	go func() {
		defer conns.Done()
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer conns.Done()
				defer conn.Close()
				var size [4]byte
				if _, err := io.ReadFull(conn, size[:]); err == nil {
					_, _ = io.CopyN(io.Discard, conn, int64(binary.BigEndian.Uint32(size[:])))
				}
			}()
		}
	}()
	return l.Addr().String()
}
