package framework

import (
	"fmt"
	"log/slog"
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
