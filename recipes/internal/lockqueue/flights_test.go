package lockqueue

import (
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// ZooKeeper's opcodes, as a flight lists them.
const (
	opCreate       = 1
	opDelete       = 2
	opGetData      = 4
	opGetChildren2 = 12
	opSetWatches   = 101
)

// flightClient is a client whose answers d holds back once d.Hold is called, and the
// lock path p made already (so that the create makes no parent).
func flightClient(t *testing.T, srv *zktest.Server, p string) (*framework.Client, *zkrtest.FlightDialer) {
	d := zkrtest.NewFlightDialer()
	c := zkrtest.Client(t, []string{srv.Addr()}, framework.WithDialer(d.Dial))
	_, err := c.Create(zkrtest.Context(t), p, nil)
	require.NoError(t, err)
	t.Cleanup(d.Release)
	return c, d
}

func sorted(ops []int32) []int32 { slices.Sort(ops); return ops }

// joined checks the flights of a join: the create, then the listing, in one (the
// listing is sent once the create is written); it returns the flight after, n
// requests.
func joined(t *testing.T, d *zkrtest.FlightDialer, n int) []int32 {
	t.Helper()
	require.Equal(t, []int32{opCreate, opGetChildren2}, d.Flight(t, 2), "the create, then the listing")
	return sorted(d.Flight(t, n))
}

// acquireInBackground acquires; the hold comes on the channel.
func acquireInBackground(t *testing.T, q *Queue) <-chan *Held {
	acquired := make(chan *Held, 1)
	go func() {
		h, err := q.Acquire(zkrtest.Context(t), nil, Options{Wait: true})
		if err != nil {
			t.Error(err)
		}
		acquired <- h
	}()
	return acquired
}

// An uncontended acquisition is one flight: the create, then the listing, which
// the server gets in that order; the create's reply gives the fencing token, and the
// holder's watch on its node is set while it holds, as of that czxid (setWatches,
// with no read), with the release's delete in its flight (issue 45 items 1 and 2).
func TestUncontendedAcquireFlights(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := zkrtest.Context(t)
	c, d := flightClient(t, srv, "/flights")
	q := New(c, "/flights", "lock-", Exclusive, HandOverOnNotification())
	reader := zkrtest.Client(t, []string{srv.Addr()})

	for range 5 { // the order held by chance would not hold five times
		d.Hold()
		acquired := acquireInBackground(t, q)
		require.Equal(t, []int32{opCreate, opGetChildren2}, d.Flight(t, 2), "the create, then the listing")
		var h *Held
		select {
		case h = <-acquired:
			require.NotNil(t, h, "no hold after one flight")
		case <-ctx.Done():
			t.Fatalf("no hold after one flight; sent since: %v", d.Pending())
		}
		ok, stat, err := reader.Exists(ctx, h.Node.Path)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, stat.Czxid, h.FencingToken(), "the create's reply's zxid is the node's czxid")
		require.Eventually(t, func() bool { return slices.Contains(d.Pending(), opSetWatches) }, zkrtest.Wait, time.Millisecond, "the holder's watch")
		released := make(chan error, 1)
		go func() { released <- h.Release(ctx) }()
		require.Equal(t, []int32{opSetWatches, opDelete}, d.Flight(t, 2), "the holder's watch and the release")
		require.NoError(t, <-released)
		d.Release()
	}
}

// A waiter behind the first node sets its own node's watch with the watch on that
// node, in one request: a setWatches, with no read, for a node whose name says
// anyone may read it (framework's protected ids, as ours are with the default ACL).
// When the holder goes, the notification itself hands the lock over, with no
// request (issue 45 items 1 and 3). Deleting the new holder's node still ends its
// hold (issue 35).
func TestHandOverOnTheNotification(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := zkrtest.Context(t)
	c, d := flightClient(t, srv, "/handover")
	other := zkrtest.Client(t, []string{srv.Addr()})
	first, err := New(other, "/handover", "lock-", Exclusive).Acquire(ctx, nil, Options{Wait: true})
	require.NoError(t, err)
	q := New(c, "/handover", "lock-", Exclusive, HandOverOnNotification())

	d.Hold()
	acquired := acquireInBackground(t, q)
	require.Equal(t, []int32{opSetWatches}, joined(t, d, 1), "the watches on the holder's node and on ours, in one request")
	require.NoError(t, first.Release(ctx))
	d.Notified(t)
	h := <-acquired
	require.Empty(t, d.Pending(), "the hand-over asked the server nothing")
	d.Release()
	defer h.Forget()

	zkrtest.DeleteHolder(t, other, h.Node.Path)
	select {
	case <-h.Lost():
	case <-ctx.Done():
		t.Fatal("the holder's node's deletion was never heard")
	}
	require.ErrorIs(t, h.Cause(), ErrNodeDeleted)
}

// Where a node can come ahead of ours, the notification hands nothing over: the
// waiter lists again. A read/write lock's downgrade makes a read node at the
// writer's old sequence, ahead of a writer waiting behind it.
func TestDowngradeAheadOfAWaitingWriter(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := zkrtest.Context(t)
	c, d := flightClient(t, srv, "/rw")
	other := zkrtest.Client(t, []string{srv.Addr()})
	names := Names("read-", "write-")
	writer := New(other, "/rw", "write-", ReadWrite("write-"), names)
	reader := New(other, "/rw", "read-", ReadWrite("write-"), names)
	w, err := writer.Acquire(ctx, nil, Options{Wait: true})
	require.NoError(t, err)
	q := New(c, "/rw", "write-", ReadWrite("write-"), names)

	d.Hold()
	acquired := acquireInBackground(t, q)
	require.Equal(t, []int32{opSetWatches}, joined(t, d, 1), "the watches on the writer's node and on ours, in one request")
	seq, _ := Sequence(w.Node.Name(), []string{"write-"})
	r, err := reader.HoldAt(ctx, nil, seq)
	require.NoError(t, err)
	require.NoError(t, w.Release(ctx))
	d.Notified(t)
	require.Equal(t, []int32{opGetChildren2}, d.Flight(t, 1), "a listing after the notification")
	require.Equal(t, []int32{opGetData}, d.Flight(t, 1), "the watch on the read node ahead, ours being set")
	require.Empty(t, acquired, "the writer waits for the downgraded read lock")
	require.NoError(t, r.Release(ctx))
	d.Notified(t)
	require.Equal(t, []int32{opGetChildren2}, d.Flight(t, 1))
	(<-acquired).Forget()
}

// A child that is not the recipe's under the lock path (another writer's) makes
// the waiter list again after the notification, rather than hold on it: one round
// trip, the listing with its own node's watch (a queue whose waiters watch their
// own node while queued, a mutex's, sets it with the one on the holder's).
func TestNoHandOverOnTheNotificationAmongForeignNodes(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := zkrtest.Context(t)
	c, d := flightClient(t, srv, "/foreign")
	other := zkrtest.Client(t, []string{srv.Addr()})
	_, err := other.Create(ctx, "/foreign/not-a-participant", nil)
	require.NoError(t, err)
	first, err := New(other, "/foreign", "lock-", Exclusive).Acquire(ctx, nil, Options{Wait: true})
	require.NoError(t, err)
	q := New(c, "/foreign", "lock-", Exclusive, HandOverOnNotification())

	d.Hold()
	acquired := acquireInBackground(t, q)
	require.Equal(t, []int32{opGetData}, joined(t, d, 1), "the watch on the holder's node, not ours")
	require.NoError(t, first.Release(ctx))
	d.Notified(t)
	require.Equal(t, []int32{opGetChildren2, opSetWatches}, sorted(d.Flight(t, 2)), "a listing after the notification, with the holder's watch")
	(<-acquired).Forget()
}

// A node whose name does not say that anyone may read it (Curator's, whose ids are
// of version 4, or ours made with an ACL that keeps others from it) is watched with
// a read, whose refusal would tell that its notifications never come (see
// framework.Plumbing.WatchDataSince): the read and our own node's setWatches go in
// one write, and the notification still hands the lock over.
func TestAWaiterReadsANodeNotSaidReadable(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := zkrtest.Context(t)
	c, d := flightClient(t, srv, "/curator")
	curator := zkrtest.Client(t, []string{srv.Addr()})
	first, err := curator.Create(ctx, "/curator/_c_"+uuid.NewString()+"-lock-", nil, framework.Ephemeral(), framework.Sequential())
	require.NoError(t, err)
	q := New(c, "/curator", "lock-", Exclusive, HandOverOnNotification())

	d.Hold()
	acquired := acquireInBackground(t, q)
	require.Equal(t, []int32{opGetData, opSetWatches}, joined(t, d, 2), "the holder's node with a read, ours with none, in one write")
	require.NoError(t, curator.Delete(ctx, first, -1))
	d.Notified(t)
	h := <-acquired
	require.Empty(t, d.Pending(), "the hand-over asked the server nothing")
	d.Release()
	h.Forget()
}

// The node ahead, written between our create and our watch on it (a revocation
// request, say), is not watched as of our create: the setWatches notifies at once,
// and the waiter, woken for nothing, lists again and watches it with a read. It
// still holds on the holder's going, and not before.
func TestANodeAheadWrittenSinceOurCreateIsReadAfterAWake(t *testing.T) {
	ctx := zkrtest.Context(t)
	d, other, first, acquired := joinedBehindAHolder(t, "/written")
	_, err := other.Set(ctx, first.Node.Path, []byte("written since"), -1)
	require.NoError(t, err)
	require.Equal(t, []int32{opSetWatches}, joined(t, d, 1), "the watches on the holder's node and on ours, in one request")
	require.Equal(t, []int32{opGetChildren2}, d.Flight(t, 1), "woken at once: a listing")
	require.Equal(t, []int32{opGetData}, d.Flight(t, 1), "the holder's node, read this time; ours is set")
	require.Empty(t, acquired, "no hold while the holder holds")
	require.NoError(t, first.Release(ctx))
	d.Notified(t)
	h := <-acquired
	require.Empty(t, d.Pending(), "the hand-over asked the server nothing")
	d.Release()
	h.Forget()
}

// The node ahead, gone before our watch on it reaches the server, notifies at once,
// before the setWatches' answer, and the waiter holds on that notification, with no
// listing: the node was the first of our listing, and our node's watch, set in the
// same request, is answered with it.
func TestANodeAheadGoneBeforeOurWatchHandsOver(t *testing.T) {
	ctx := zkrtest.Context(t)
	d, other, first, acquired := joinedBehindAHolder(t, "/gone")
	require.NoError(t, first.Release(ctx))
	require.Equal(t, []int32{opSetWatches}, joined(t, d, 1), "the watches on the holder's node and on ours, in one request")
	h := <-acquired
	require.Empty(t, d.Pending(), "the hand-over asked the server nothing more")
	d.Release()
	defer h.Forget()
	ok, stat, err := other.Exists(ctx, h.Node.Path)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, stat.Czxid, h.FencingToken())
}

// joinedBehindAHolder makes a holder of the lock at p on another client, then a
// waiter whose answers d holds, and returns once the waiter's node is made, its
// create's answer held: a test may change the holder's node before the waiter
// knows of it.
func joinedBehindAHolder(t *testing.T, p string) (*zkrtest.FlightDialer, *framework.Client, *Held, <-chan *Held) {
	srv := zktest.NewServer(t)
	ctx := zkrtest.Context(t)
	c, d := flightClient(t, srv, p)
	other := zkrtest.Client(t, []string{srv.Addr()})
	first, err := New(other, p, "lock-", Exclusive).Acquire(ctx, nil, Options{Wait: true})
	require.NoError(t, err)
	q := New(c, p, "lock-", Exclusive, HandOverOnNotification())

	d.Hold()
	acquired := acquireInBackground(t, q)
	require.Eventually(t, func() bool {
		kids, _, err := other.Children(ctx, p)
		return err == nil && len(kids) == 2
	}, zkrtest.Wait, time.Millisecond, "our node made, its answer held")
	return d, other, first, acquired
}
