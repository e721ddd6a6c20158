package framework

import (
	"context"
	"net"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/zktest"
)

// dialCounter counts the connections a client makes, by address.
type dialCounter struct {
	mu    sync.Mutex
	dials map[string]int
}

func (d *dialCounter) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	d.mu.Lock()
	d.dials[addr]++
	d.mu.Unlock()
	return net.DialTimeout(network, addr, timeout)
}

func (d *dialCounter) reset() {
	d.mu.Lock()
	defer d.mu.Unlock()
	clear(d.dials)
}

func (d *dialCounter) count(addr string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dials[addr]
}

func TestEnsembleTrackingFollowsReconfiguration(t *testing.T) {
	t.Parallel()
	// One member at first; the client is given it alone.
	e := zktest.NewEnsemble(t, 1, zktest.WithDynamicConfig(), zktest.WithSessionTimeouts(400*time.Millisecond, 20*time.Second))
	dials := &dialCounter{dials: map[string]int{}}
	c := newClient(t, []string{e.Addr(0)}, WithEnsembleTracking(true), WithNamespace("app"),
		WithSessionTimeout(15*time.Second), WithDialer(dials.dial))
	// Four servers start and two elections run within it: under load that is
	// longer than one wait.
	ctx, cancel := context.WithTimeout(context.Background(), 4*wait)
	defer cancel()
	sid := c.SessionID()
	states := timeStates(c)

	cfg, err := c.Config(ctx)
	require.NoError(t, err)
	require.Len(t, cfg.Members, 1)
	require.Equal(t, e.Addr(0), cfg.Members[0].Client)
	require.Equal(t, []string{e.Addr(0)}, c.Servers())

	// Two members join and a reconfig adds them: the client learns of them.
	var joining []string
	for range 2 {
		i, err := e.Join(ctx, "")
		require.NoError(t, err)
		joining = append(joining, e.ServerLine(i))
	}
	cfg, err = c.Reconfig(ctx, joining, nil, cfg.Version)
	require.NoError(t, err)
	require.Len(t, cfg.Members, 3)
	require.ElementsMatch(t, e.Addrs(), cfg.ClientAddrs())
	require.Eventually(t, func() bool { return sameSet(c.Servers(), e.Addrs()) }, wait, 10*time.Millisecond,
		"servers in use: %v", c.Servers())

	// The member it was given is killed: the session goes on on an added one.
	require.Equal(t, e.Addr(0), c.Conn().Server())
	e.Stop(0)
	elected(t, e)
	require.Eventually(t, func() bool { return c.State().IsConnected() && c.Conn().Server() != e.Addr(0) },
		wait, 10*time.Millisecond, "state %v on %s", c.State(), c.Conn().Server())
	heard, suspended := states.since(0)
	t.Logf("the only member given was killed: suspended for %v (%v)", suspended, heard)
	require.NotContains(t, heard, Lost)
	require.Equal(t, sid, c.SessionID())
	_, err = c.Create(ctx, "/after", nil)
	require.NoError(t, err)
	ok, _, err := c.Namespaced("").Exists(ctx, "/app/after")
	require.NoError(t, err)
	require.True(t, ok, "the namespace is kept")

	// A fourth member joins; the first is removed: it is no longer dialled.
	require.NoError(t, e.Start(0))
	i, err := e.Join(ctx, "")
	require.NoError(t, err)
	cfg, err = c.Reconfig(ctx, []string{e.ServerLine(i)}, []string{strconv.Itoa(e.ID(0))}, -1)
	require.NoError(t, err)
	require.ElementsMatch(t, e.Addrs()[1:], cfg.ClientAddrs())
	require.Eventually(t, func() bool { return sameSet(c.Servers(), e.Addrs()[1:]) }, wait, 10*time.Millisecond,
		"servers in use: %v", c.Servers())
	e.Stop(0)
	dials.reset()
	mark := states.count()
	on := slices.Index(e.Addrs(), c.Conn().Server())
	e.Stop(on)
	elected(t, e)
	require.Eventually(t, func() bool { return c.State().IsConnected() && c.Conn().Server() != e.Addr(on) },
		wait, 10*time.Millisecond, "state %v on %s", c.State(), c.Conn().Server())
	heard, suspended = states.since(mark)
	t.Logf("member %d killed after the first was removed: suspended for %v (%v)", on, suspended, heard)
	require.NotContains(t, heard, Lost)
	require.Equal(t, sid, c.SessionID())
	require.Zero(t, dials.count(e.Addr(0)), "the removed member is not dialled")
}
