package zktest

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
)

// These tests put a Proxy between a real ZooKeeper and a raw go-zookeeper client
// (client A), whose only server address is the proxy's. Where a second view is needed,
// client B talks to the server directly.

// zkWait bounds the condition waits below; none of them should come near it.
const zkWait = 30 * time.Second

func TestProxyZKExpireSession(t *testing.T) {
	s := NewServer(t)
	p := NewProxy(t, s.Addr())

	// The server's tick is 200ms, so it grants 2s (10 ticks) as asked.
	const sessionTimeout = 2 * time.Second
	a, aEvents := connect(t, []string{p.Addr()}, sessionTimeout)
	b, _ := connect(t, []string{s.Addr()}, 4*time.Second)
	oldSession := a.SessionID()

	_, err := a.Create("/eph", []byte("a"), zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	ok, _, err := b.Exists("/eph")
	require.NoError(t, err)
	require.True(t, ok, "B sees A's ephemeral node while A's session lives")

	require.NoError(t, p.ExpireSession(t.Context(), sessionTimeout))

	require.Eventually(t, func() bool {
		ok, _, err := b.Exists("/eph")
		return err == nil && !ok
	}, zkWait, 10*time.Millisecond, "the server expired A's session and deleted its ephemeral node")

	// A learns of the expiry when it reconnects through the restored proxy, then
	// go-zookeeper opens a new session.
	waitState(t, aEvents, zk.StateExpired)
	waitState(t, aEvents, zk.StateHasSession)
	require.NotEqual(t, oldSession, a.SessionID(), "a new session after the expiry")
	_, _, err = a.Get("/eph")
	require.ErrorIs(t, err, zk.ErrNoNode)
}

func TestProxyZKCutKeepsSession(t *testing.T) {
	s := NewServer(t)
	p := NewProxy(t, s.Addr())

	// The longest timeout the server allows (20 ticks), so that the cut, which lasts
	// about one reconnect attempt (go-zookeeper waits 1s between rounds), stays well
	// within it.
	a, aEvents := connect(t, []string{p.Addr()}, 4*time.Second)
	session := a.SessionID()
	_, err := a.Create("/eph", []byte("kept"), zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)

	p.Cut()
	// The proxy closed the connection: A sees it at once, not after a timeout.
	waitState(t, aEvents, zk.StateDisconnected)
	// A reconnect attempt during the cut is accepted, then closed, and fails too.
	waitState(t, aEvents, zk.StateConnected)
	waitState(t, aEvents, zk.StateDisconnected)

	p.Restore()
	waitState(t, aEvents, zk.StateHasSession)
	require.Equal(t, session, a.SessionID(), "the cut was shorter than the session timeout: same session")

	// The session's ephemeral node survived, and A reads again.
	data, _, err := a.Get("/eph")
	require.NoError(t, err)
	require.Equal(t, "kept", string(data))
}

func TestProxyZKBlackhole(t *testing.T) {
	s := NewServer(t)
	p := NewProxy(t, s.Addr())

	a, aEvents := connect(t, []string{p.Addr()}, 2*time.Second)
	_, err := a.Create("/persistent", []byte("v"), 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)

	p.Blackhole()
	// No EOF reaches A: it notices only when its receive timeout (2/3 of the
	// session timeout) runs out without even a ping reply.
	waitState(t, aEvents, zk.StateDisconnected)
	// The silence was a blackhole, not a closed connection: A's pings were dropped.
	require.Eventually(t, func() bool { return p.dropped.Load() > 0 }, zkWait, time.Millisecond)

	p.Restore()
	// Whether A gets its old session back or, having been away about as long as
	// its timeout, a new one, it serves reads again.
	waitState(t, aEvents, zk.StateHasSession)
	data, _, err := a.Get("/persistent")
	require.NoError(t, err)
	require.Equal(t, "v", string(data))
}
