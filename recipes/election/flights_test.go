package election

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

// A latch behind the leader: its create, then its listing, then the watch on the
// leader's node with its own node's watch in one setWatches, with no read (the
// leader's node's name says anyone may read it), since it leads next
// (issue 45 item 7: a candidate further back watches only the one before it). The
// leader's Close hands the leadership over on the notification, with no request
// (issue 45 item 3).
func TestLatchHandOverFlights(t *testing.T) {
	const create, getChildren2, setWatches = 1, 12, 101
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	d := zkrtest.NewFlightDialer()
	c := zkrtest.Client(t, []string{srv.Addr()}, framework.WithDialer(d.Dial))
	_, err := c.Create(ctx, "/election/flights", nil, framework.CreatingParents())
	require.NoError(t, err)
	leader := newLatch(t, newClient(t, []string{srv.Addr()}), "/election/flights")
	require.NoError(t, leader.Start(ctx))
	require.NoError(t, leader.Await(ctx))
	next := newLatch(t, c, "/election/flights")
	t.Cleanup(d.Release)

	d.Hold()
	started := make(chan error, 1)
	go func() { started <- next.Start(ctx) }()
	require.Equal(t, []int32{create}, d.Flight(t, 1))
	require.NoError(t, <-started)
	require.Equal(t, []int32{getChildren2}, d.Flight(t, 1), "the listing")
	require.Equal(t, []int32{setWatches}, d.Flight(t, 1), "the watches on the leader's node and on ours, in one request")
	require.NoError(t, leader.Close(ctx))
	d.Notified(t)
	require.NoError(t, next.Await(ctx))
	require.Empty(t, d.Pending(), "the hand-over asked the server nothing")
}

// A latch that loses its leadership to a Suspended and leads again on the same node
// does not watch its node again: the watch set in the first term still stands, so
// go-zookeeper keeps no new channel for it each term (issue 46, finding 6).
func TestLatchLeadsAgainWithoutWatchingAgain(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	d := &zkrtest.LossyDialer{}
	c := zkrtest.Client(t, []string{srv.Addr()}, framework.WithDialer(d.Dial),
		framework.WithErrorPolicy(framework.StandardErrorPolicy))
	l := newLatch(t, c, "/election/again")
	changes := make(chan bool, 4)
	defer l.Listen(func(leader bool) { changes <- leader })()
	require.NoError(t, l.Start(ctx))
	require.True(t, <-changes)
	// Its node's watch is sent once it leads, in a flight the grant does not wait for.
	require.Eventually(t, func() bool {
		return slices.Contains(zkrtest.DataWatches(t, srv, c.SessionID()), l.Node())
	}, zkrtest.Wait, 10*time.Millisecond, "our node's watch is set")
	// The server answers in order: once this reply is in, so is the watch's, which a
	// cut would otherwise lose (and the watch be read again, in the next term).
	_, _, err := c.Exists(ctx, l.Node())
	require.NoError(t, err)

	for term := range 3 {
		d.Requests()
		d.Cut()
		require.False(t, <-changes, "term %d: the Suspended ends the leadership", term)
		require.True(t, <-changes, "term %d: leads again once reconnected", term)
		require.Zero(t, d.Requests()[zkrtest.OpGetData], "term %d: no read of our node", term)
	}
}
