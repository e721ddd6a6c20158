package barrier

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// members lists the member nodes of the barrier at p, without ready.
func members(t *testing.T, c *framework.Client, p string) []string {
	t.Helper()
	return slices.DeleteFunc(children(t, c, p), func(n string) bool { return n == readyName })
}

// No member passes Enter before all have entered, and none passes Leave before all
// have left; then nothing is left of the barrier.
func TestDoubleEntersAndLeavesTogether(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	observer := newClient(t, []string{srv.Addr()})
	const n = 3
	var ds []*Double
	for range n {
		ds = append(ds, newDouble(t, newClient(t, []string{srv.Addr()}), "/barriers/double", n))
	}

	var enters []<-chan error
	for i, d := range ds[:n-1] {
		enters = append(enters, run(ctx, d.Enter))
		eventually(t, func() bool { return len(members(t, observer, "/barriers/double")) == i+1 }, "member joined")
	}
	for _, e := range enters {
		notYet(t, e, "Enter with too few members")
	}
	enters = append(enters, run(ctx, ds[n-1].Enter))
	for _, e := range enters {
		require.NoError(t, <-e)
	}
	require.Contains(t, children(t, observer, "/barriers/double"), readyName)
	data, _, err := observer.Get(ctx, "/barriers/double/"+readyName)
	require.NoError(t, err)
	require.Equal(t, localAddress(), data)
	for _, m := range members(t, observer, "/barriers/double") {
		require.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`, m, "Curator's member name: a UUID")
	}

	// The lowest member in name order is the one the others wait for once they have
	// deleted their nodes; make it leave last.
	slices.SortFunc(ds, func(a, b *Double) int { return compare(a.ourName(), b.ourName()) })
	var leaves []<-chan error
	for _, d := range ds[1:] {
		leaves = append(leaves, run(ctx, d.Leave))
	}
	eventually(t, func() bool { return len(members(t, observer, "/barriers/double")) == 1 }, "the others deleted their nodes")
	for _, l := range leaves {
		notYet(t, l, "Leave while a member is still in")
	}
	require.NoError(t, ds[0].Leave(ctx))
	for _, l := range leaves {
		require.NoError(t, <-l)
	}
	require.Empty(t, children(t, observer, "/barriers/double"), "no member node, no ready node")

	// Again, with the lowest member leaving first: it waits for the highest.
	for _, e := range []<-chan error{run(ctx, ds[0].Enter), run(ctx, ds[1].Enter), run(ctx, ds[2].Enter)} {
		require.NoError(t, <-e)
	}
	names := members(t, observer, "/barriers/double")
	slices.SortFunc(ds, func(a, b *Double) int { return compare(a.ourName(), b.ourName()) })
	require.Equal(t, names[0], ds[0].ourName())
	lowest := run(ctx, ds[0].Leave)
	middle := run(ctx, ds[1].Leave)
	eventually(t, func() bool { return len(members(t, observer, "/barriers/double")) == 2 }, "the middle member deleted its node")
	notYet(t, lowest, "the lowest member's Leave")
	notYet(t, middle, "the middle member's Leave")
	require.NoError(t, ds[2].Leave(ctx))
	require.NoError(t, <-lowest)
	require.NoError(t, <-middle)
	require.Empty(t, children(t, observer, "/barriers/double"))
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// members is a threshold, not a limit (Curator's testOverSubscribed): three members
// of a barrier for two all enter, whether they come together or one comes late, and
// all leave.
func TestDoubleOverSubscribed(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	observer := newClient(t, []string{srv.Addr()})
	var ds []*Double
	for range 3 {
		ds = append(ds, newDouble(t, newClient(t, []string{srv.Addr()}), "/barriers/over", 2))
	}
	together := func(call func(*Double) func(context.Context) error) {
		var done []<-chan error
		for _, d := range ds {
			done = append(done, run(ctx, call(d)))
		}
		for _, e := range done {
			require.NoError(t, <-e)
		}
	}
	together(func(d *Double) func(context.Context) error { return d.Enter })
	require.Len(t, members(t, observer, "/barriers/over"), 3)
	together(func(d *Double) func(context.Context) error { return d.Leave })
	require.Empty(t, children(t, observer, "/barriers/over"))

	for _, e := range []<-chan error{run(ctx, ds[0].Enter), run(ctx, ds[1].Enter)} {
		require.NoError(t, <-e)
	}
	require.NoError(t, ds[2].Enter(ctx), "the late third: the barrier is full already")
	together(func(d *Double) func(context.Context) error { return d.Leave })
	require.Empty(t, children(t, observer, "/barriers/over"))
}

// A ready node left by an earlier round, whose members went without deleting it,
// does not let a lone member pass (it does with Curator's).
func TestDoubleIgnoresALeftoverReadyNode(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	_, err := c.Create(ctx, "/barriers/stale/ready", nil, framework.CreatingParents())
	require.NoError(t, err)

	first := newDouble(t, newClient(t, []string{srv.Addr()}), "/barriers/stale", 2)
	entered := run(ctx, first.Enter)
	eventually(t, func() bool {
		names := children(t, c, "/barriers/stale")
		return len(names) == 1 && names[0] != readyName
	}, "the leftover ready node deleted, our member node there")
	notYet(t, entered, "Enter alone")

	second := newDouble(t, newClient(t, []string{srv.Addr()}), "/barriers/stale", 2)
	require.NoError(t, second.Enter(ctx))
	require.NoError(t, <-entered)
}

// A wake-up that is not the barrier filling never lets a member pass. Curator's
// Enter (with a timeout) passes on a connection event or a spurious wake-up alone,
// without counting again (apache/curator#1290). Here a lone member waits in Enter
// while its connection is cut and comes back in the same session, three times: each
// reconnect wakes it, and it lists the members again (seen on the wire) and waits on.
func TestDoubleEnterPassesOnlyOnTheCount(t *testing.T) {
	const getChildren2 = 12 // ZooKeeper's opcode: what Children sends
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	observer := newClient(t, []string{srv.Addr()})
	d := &zkrtest.LossyDialer{}
	c := newClient(t, []string{srv.Addr()}, framework.WithDialer(d.Dial), framework.WithSessionTimeout(10*time.Second))
	lone := newDouble(t, c, "/barriers/wakeups", 2)
	entered := run(ctx, lone.Enter)
	// listed waits until Enter has listed the members (again), and has the answer:
	// a request of ours on its connection is answered after the listing.
	listed := func(what string) {
		t.Helper()
		n, returned := 0, false
		eventually(t, func() bool {
			select {
			case <-entered:
				returned = true
			default:
			}
			n += d.Requests()[getChildren2]
			return returned || n > 0
		}, what)
		require.False(t, returned, "Enter returned with one member of two")
		_, _, err := c.Exists(ctx, "/")
		require.NoError(t, err)
	}
	listed("Enter listed the members")
	node, session := members(t, observer, "/barriers/wakeups")[0], c.SessionID()
	for range 3 {
		d.Cut()
		listed("Enter woke on the reconnect and listed the members again")
	}
	notYet(t, entered, "Enter with one member of two")
	require.Equal(t, session, c.SessionID(), "the same session: connection events only")
	require.Equal(t, node, lone.ourName(), "the same node")

	other := newDouble(t, observer, "/barriers/wakeups", 2)
	require.NoError(t, other.Enter(ctx))
	require.NoError(t, <-entered)
	for _, l := range []<-chan error{run(ctx, lone.Leave), run(ctx, other.Leave)} {
		require.NoError(t, <-l)
	}
}

// A member whose session ends while it waits in Enter joins again in its next
// session; the barrier opens for all once enough members are there.
func TestDoubleEnterThroughSessionExpiry(t *testing.T) {
	srv := zkrtest.Server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	ctx := testCtx(t)
	observer := newClient(t, []string{srv.Addr()})
	victimClient := newClient(t, []string{proxy.Addr()}, framework.WithSessionTimeout(2*time.Second))
	victim := newDouble(t, victimClient, "/barriers/expiry", 2)
	entered := run(ctx, victim.Enter)
	eventually(t, func() bool { return len(members(t, observer, "/barriers/expiry")) == 1 }, "joined")
	before := members(t, observer, "/barriers/expiry")

	require.NoError(t, proxy.ExpireSession(ctx, 2*time.Second))
	require.NoError(t, victimClient.WaitConnected(ctx))
	eventually(t, func() bool {
		now := members(t, observer, "/barriers/expiry")
		return len(now) == 1 && now[0] != before[0]
	}, "joined again with a new node")
	notYet(t, entered, "Enter alone")

	other := newDouble(t, newClient(t, []string{srv.Addr()}), "/barriers/expiry", 2)
	require.NoError(t, other.Enter(ctx))
	require.NoError(t, <-entered)
	_, stat, err := observer.Get(ctx, "/barriers/expiry/"+victim.ourName())
	require.NoError(t, err)
	require.Equal(t, victimClient.SessionID(), stat.EphemeralOwner)

	leaves := []<-chan error{run(ctx, victim.Leave), run(ctx, other.Leave)}
	for _, l := range leaves {
		require.NoError(t, <-l)
	}
}

// A member whose session ends between Enter and Leave counts as gone: the others
// leave without it, and its own Leave says so.
func TestDoubleMemberLostBeforeLeave(t *testing.T) {
	srv := zkrtest.Server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	ctx := testCtx(t)
	victimClient := newClient(t, []string{proxy.Addr()}, framework.WithSessionTimeout(2*time.Second))
	victim := newDouble(t, victimClient, "/barriers/lost", 2)
	other := newDouble(t, newClient(t, []string{srv.Addr()}), "/barriers/lost", 2)
	enters := []<-chan error{run(ctx, victim.Enter), run(ctx, other.Enter)}
	for _, e := range enters {
		require.NoError(t, <-e)
	}
	require.NoError(t, proxy.ExpireSession(ctx, 2*time.Second))
	require.NoError(t, victimClient.WaitConnected(ctx))
	require.NoError(t, other.Leave(ctx), "the lost member counts as gone")
	require.ErrorIs(t, victim.Leave(ctx), ErrLost)
	require.Empty(t, children(t, victimClient, "/barriers/lost"), "nothing left")
}

// A cancelled Enter leaves no node: nobody counts a member that gave up
// (CURATOR-80).
func TestDoubleCancelledEnter(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	observer := newClient(t, []string{srv.Addr()})
	d := newDouble(t, newClient(t, []string{srv.Addr()}), "/barriers/cancel", 2)
	short, cancel := context.WithCancel(ctx)
	entered := run(short, d.Enter)
	eventually(t, func() bool { return len(members(t, observer, "/barriers/cancel")) == 1 }, "joined")
	cancel()
	require.ErrorIs(t, <-entered, context.Canceled)
	require.Empty(t, members(t, observer, "/barriers/cancel"))

	// It may enter again.
	other := newDouble(t, newClient(t, []string{srv.Addr()}), "/barriers/cancel", 2)
	enters := []<-chan error{run(ctx, d.Enter), run(ctx, other.Enter)}
	for _, e := range enters {
		require.NoError(t, <-e)
	}
}

// A member cut off while the barrier fills passes once its connection is back, in
// the same session, with the node it had; and members leave through a server
// restart.
func TestDoubleThroughACutAndARestart(t *testing.T) {
	// The session must outlast the cut and the restart however slowly a busy machine
	// starts a server: zktest's default sessions are at most 4 s.
	srv := zktest.NewServer(t, zktest.WithSessionTimeouts(400*time.Millisecond, time.Minute))
	proxy := zktest.NewProxy(t, srv.Addr())
	ctx := testCtx(t)
	observer := newClient(t, []string{srv.Addr()})
	cutClient := newClient(t, []string{proxy.Addr()}, framework.WithSessionTimeout(time.Minute))
	cut := newDouble(t, cutClient, "/barriers/cut", 2)
	entered := run(ctx, cut.Enter)
	eventually(t, func() bool { return len(members(t, observer, "/barriers/cut")) == 1 }, "joined")
	node := members(t, observer, "/barriers/cut")[0]
	session := cutClient.SessionID()

	proxy.Cut()
	other := newDouble(t, observer, "/barriers/cut", 2)
	require.NoError(t, other.Enter(ctx))
	proxy.Restore()
	require.NoError(t, <-entered)
	require.Equal(t, session, cutClient.SessionID())
	require.Equal(t, node, cut.ourName(), "the same node")

	// Leaving waits through a server restart.
	left := run(ctx, cut.Leave)
	srv.Stop()
	require.NoError(t, srv.Start())
	notYet(t, left, "Leave while the other member is in")
	require.NoError(t, other.Leave(ctx))
	require.NoError(t, <-left)
	require.Empty(t, children(t, observer, "/barriers/cut"))
}
