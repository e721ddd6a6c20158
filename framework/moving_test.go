package framework

import (
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/zktest"
)

// movingEnsemble is a three-member ensemble whose members serve clients on their own
// loopback addresses, named zk1.test, zk2.test and zk3.test in a DNS server of the
// test's.
type movingEnsemble struct {
	e     *zktest.Ensemble
	dns   *testDNS
	names []string // "zkN.test:port", what clients are given
}

func newMovingEnsemble(t *testing.T) *movingEnsemble {
	// A session timeout of up to a minute: a member moves in a few seconds on a busy
	// machine, and the session must outlive the elections it causes.
	e := zktest.NewEnsemble(t, 3, zktest.WithClientAddresses("127.0.0.1", "127.0.0.2", "127.0.0.3"),
		zktest.WithSessionTimeouts(400*time.Millisecond, time.Minute))
	m := &movingEnsemble{e: e, dns: startDNS(t)}
	for i := range 3 {
		host, port, err := net.SplitHostPort(e.Addr(i))
		require.NoError(t, err)
		name := fmt.Sprintf("zk%d.test", i+1)
		m.dns.set(name, host)
		m.names = append(m.names, net.JoinHostPort(name, port))
	}
	return m
}

// move restarts member i at host, its name unknown to DNS while it is down, as a
// Kubernetes headless service's record is while its pod restarts.
func (m *movingEnsemble) move(t *testing.T, i int, host string) {
	t.Helper()
	name, _, _ := net.SplitHostPort(m.names[i])
	m.dns.set(name)
	require.NoError(t, m.e.Move(testCtx(t), i, host))
	m.dns.set(name, host)
}

// on is the member c's connection is on, or -1.
func (m *movingEnsemble) on(c *Client) int {
	return slices.Index(m.e.Addrs(), c.Conn().Server())
}

// timedStates records the states a client enters, and when.
type timedStates struct {
	mu     sync.Mutex
	states []ConnectionState
	at     []time.Time
}

func timeStates(c *Client) *timedStates {
	ts := &timedStates{}
	c.Listen(func(s ConnectionState) {
		ts.mu.Lock()
		defer ts.mu.Unlock()
		ts.states = append(ts.states, s)
		ts.at = append(ts.at, time.Now())
	})
	return ts
}

// since returns what was heard from entry n on, and how long the client was
// Suspended in it.
func (ts *timedStates) since(n int) ([]ConnectionState, time.Duration) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	var suspended time.Duration
	for i := n; i < len(ts.states); i++ {
		if ts.states[i] == Suspended && i+1 < len(ts.states) {
			suspended += ts.at[i+1].Sub(ts.at[i])
		}
	}
	return slices.Clone(ts.states[min(n, len(ts.states)):]), suspended
}

func (ts *timedStates) count() int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return len(ts.states)
}

// settled waits until c is connected and has used its connection.
func settled(t *testing.T, c *Client) {
	t.Helper()
	require.NoError(t, c.WaitConnected(testCtx(t)))
	_, _, err := c.Exists(testCtx(t), "/")
	require.NoError(t, err)
}

func TestMovedMemberIsReachedAtItsNewAddress(t *testing.T) {
	t.Parallel()
	m := newMovingEnsemble(t)
	c := newClient(t, m.names, WithResolver(m.dns.resolver()), WithSessionTimeout(time.Minute))
	sid := c.SessionID()
	states := timeStates(c)

	// The member the client is on moves: the client goes to another, same session.
	moved := m.on(c)
	require.NotEqual(t, -1, moved, "connected to %s, not a member", c.Conn().Server())
	m.move(t, moved, "127.0.0.11")
	settled(t, c)
	heard, suspended := states.since(0)
	t.Logf("member %d moved to 127.0.0.11: suspended for %v (%v)", moved, suspended, heard)
	require.NotContains(t, heard, Lost)
	require.Equal(t, sid, c.SessionID())
	now := m.on(c)
	require.NotEqual(t, moved, now)

	// Only the moved member's name resolves while the member the client is on
	// restarts: the client can go nowhere but to the moved member's new address.
	for i, name := range m.names {
		if i != moved {
			host, _, _ := net.SplitHostPort(name)
			m.dns.set(host)
		}
	}
	mark := states.count()
	m.e.Stop(now)
	elected(t, m.e)
	require.Eventually(t, func() bool { return m.on(c) == moved && c.State().IsConnected() }, wait, 10*time.Millisecond,
		"the client is on %s, state %v", c.Conn().Server(), c.State())
	require.Equal(t, "127.0.0.11", hostOf(c.Conn().Server()))
	require.NoError(t, m.e.Start(now))
	heard, suspended = states.since(mark)
	t.Logf("member %d stopped, the client went to the moved member: suspended for %v (%v)", now, suspended, heard)
	require.NotContains(t, heard, Lost)
	require.Equal(t, sid, c.SessionID())
}

func hostOf(addr string) string {
	host, _, _ := net.SplitHostPort(addr)
	return host
}

// TestRollingRestartToNewAddresses moves every member in turn, as a rolling restart
// of a StatefulSet does: a client given names keeps its session throughout; one
// given the addresses the names had at first (what go-zookeeper's DNSHostProvider
// does: it resolves once, when the connection is made) is left with addresses where
// nothing listens, and loses its session.
func TestRollingRestartToNewAddresses(t *testing.T) {
	t.Parallel()
	m := newMovingEnsemble(t)
	// A session long enough for three re-elections on a busy machine.
	c := newClient(t, m.names, WithResolver(m.dns.resolver()), WithSessionTimeout(time.Minute))
	resolvedOnce := make([]string, len(m.names))
	for i := range m.names {
		resolvedOnce[i] = m.e.Addr(i)
	}
	once := newClient(t, resolvedOnce, WithSessionTimeout(4*time.Second))
	onceLost, stop := hears(once, Lost)
	defer stop()

	sid := c.SessionID()
	ephemeral, err := c.Create(testCtx(t), "/rolling", nil, Ephemeral())
	require.NoError(t, err)
	states := timeStates(c)
	for i := range 3 {
		mark := states.count()
		host := fmt.Sprintf("127.0.0.%d", 21+i)
		m.move(t, i, host)
		settled(t, c)
		heard, suspended := states.since(mark)
		t.Logf("step %d: member %d moved to %s: suspended for %v (%v)", i+1, i, host, suspended, heard)
		require.NotContains(t, heard, Lost, "step %d", i+1)
		require.Equal(t, sid, c.SessionID(), "step %d", i+1)
	}
	require.Contains(t, []string{"127.0.0.21", "127.0.0.22", "127.0.0.23"}, hostOf(c.Conn().Server()))
	ok, stat, err := c.Exists(testCtx(t), ephemeral)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, sid, stat.EphemeralOwner, "the session's ephemeral node is still there")

	select {
	case <-onceLost:
	case <-time.After(wait):
		t.Fatalf("a client resolved once kept its session: state %v on %s", once.State(), once.Conn().Server())
	}
}

// hears returns a channel closed when c first reports s.
func hears(c *Client, s ConnectionState) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	var once sync.Once
	stop := c.Listen(func(got ConnectionState) {
		if got == s {
			once.Do(func() { close(ch) })
		}
	})
	return ch, stop
}
