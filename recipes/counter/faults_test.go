package counter

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// faulty is a counter whose client connects through a faultyDialer, beside an
// observer that reads the node directly.
type faulty struct {
	n        *Counter
	d        *faultyDialer
	observer *framework.Client
}

func newFaulty(t *testing.T, target string, srv string, opts ...framework.Option) faulty {
	d := &faultyDialer{}
	dial := d.dial
	if target != srv { // through a proxy at target
		dial = func(network, _ string, timeout time.Duration) (net.Conn, error) {
			return d.dial(network, target, timeout)
		}
	}
	c := newClient(t, []string{srv}, append(opts, framework.WithDialer(dial))...)
	f := faulty{n: newCounter(t, c, "/faults"), d: d, observer: newClient(t, []string{srv})}
	require.NoError(t, f.n.Set(testCtx(t), 100))
	return f
}

func (f faulty) value(t *testing.T) int64 {
	t.Helper()
	v, err := newCounter(t, f.observer, "/faults").Get(testCtx(t))
	require.NoError(t, err)
	return v
}

// waitApplied waits until the node's value is v: the lost write reached the server.
func (f faulty) waitApplied(t *testing.T, v int64) {
	t.Helper()
	require.Eventually(t, func() bool { return f.value(t) == v }, wait, 5*time.Millisecond)
}

// add runs Add in the background, so that the test can injure it in flight.
func (f faulty) add(ctx context.Context, delta int64) <-chan addResult {
	ch := make(chan addResult, 1)
	go func() {
		r, err := f.n.Add(ctx, delta)
		ch <- addResult{r, err}
	}()
	return ch
}

type addResult struct {
	r   Result
	err error
}

// A request lost with the connection is sent again: it applies once, and Add says so.
func TestLostRequestIsSentAgainAndAppliesOnce(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	f := newFaulty(t, srv.Addr(), srv.Addr())
	written := f.d.arm(loseRequest)
	done := f.add(ctx, 1)
	<-written
	f.d.cut()
	a := <-done
	require.NoError(t, a.err)
	require.Equal(t, Result{Pre: 100, Post: 101}, a.r)
	require.EqualValues(t, 101, f.value(t))
}

// A reply lost after the server applied the write: the second send is refused, and
// the node shows our value at the next version, which another writer adding the same
// could have written too. Curator adds again here; we say that we do not know, and
// the counter holds the add once.
func TestLostReplyIsAnUnknownOutcomeNeverASecondAdd(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	f := newFaulty(t, srv.Addr(), srv.Addr())
	written := f.d.arm(loseReply)
	done := f.add(ctx, 1)
	<-written
	f.waitApplied(t, 101)
	f.d.cut()
	a := <-done
	require.ErrorIs(t, a.err, ErrUnknownOutcome)
	require.ErrorContains(t, a.err, "101 at version")
	require.EqualValues(t, 101, f.value(t), "applied once")
}

// The request was lost and another writer took the version meanwhile: the refusal of
// the second send is proven to be that writer's doing (the next version holds its
// value, not ours), so Add tries again and succeeds.
func TestARefusalProvenToBeAnotherWritersIsRetried(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	f := newFaulty(t, srv.Addr(), srv.Addr())
	written := f.d.arm(loseRequest)
	done := f.add(ctx, 1)
	<-written
	_, err := newCounter(t, f.observer, "/faults").Add(ctx, 10)
	require.NoError(t, err)
	f.d.cut()
	a := <-done
	require.NoError(t, a.err)
	require.Equal(t, Result{Pre: 110, Post: 111}, a.r)
	require.EqualValues(t, 111, f.value(t))
}

// The reply was lost and the node moved on by two versions: nothing proves whose the
// first was.
func TestAnUnprovableRefusalIsUnknown(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	f := newFaulty(t, srv.Addr(), srv.Addr())
	written := f.d.arm(loseReply)
	done := f.add(ctx, 1)
	<-written
	f.waitApplied(t, 101)
	_, err := newCounter(t, f.observer, "/faults").Add(ctx, 10)
	require.NoError(t, err)
	f.d.cut()
	require.ErrorIs(t, (<-done).err, ErrUnknownOutcome)
	require.EqualValues(t, 111, f.value(t))
}

// The session expires with the write in flight: the write is sent again in the new
// session, and applies once.
func TestLostRequestAcrossSessionExpiry(t *testing.T) {
	srv := zktest.NewServer(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	ctx := testCtx(t)
	f := newFaulty(t, proxy.Addr(), srv.Addr(), framework.WithSessionTimeout(2*time.Second))
	session := f.n.client.SessionID()
	written := f.d.arm(loseRequest)
	done := f.add(ctx, 1)
	<-written
	require.NoError(t, proxy.ExpireSession(ctx, 2*time.Second))
	a := <-done
	require.NoError(t, a.err)
	require.Equal(t, Result{Pre: 100, Post: 101}, a.r)
	require.NotEqual(t, session, f.n.client.SessionID(), "sent again in a new session")
	require.EqualValues(t, 101, f.value(t))
}

// The session expires after the server applied the write: unknown, applied once.
func TestLostReplyAcrossSessionExpiry(t *testing.T) {
	srv := zktest.NewServer(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	ctx := testCtx(t)
	f := newFaulty(t, proxy.Addr(), srv.Addr(), framework.WithSessionTimeout(2*time.Second))
	written := f.d.arm(loseReply)
	done := f.add(ctx, 1)
	<-written
	f.waitApplied(t, 101)
	require.NoError(t, proxy.ExpireSession(ctx, 2*time.Second))
	require.ErrorIs(t, (<-done).err, ErrUnknownOutcome)
	require.EqualValues(t, 101, f.value(t))
}

// The server restarts under the write: sent again once the server is back.
func TestServerRestartUnderTheWrite(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	t.Run("request lost", func(t *testing.T) {
		f := newFaulty(t, srv.Addr(), srv.Addr())
		written := f.d.arm(loseRequest)
		done := f.add(ctx, 1)
		<-written
		srv.Stop()
		require.NoError(t, srv.Start())
		a := <-done
		require.NoError(t, a.err)
		require.Equal(t, Result{Pre: 100, Post: 101}, a.r)
		require.EqualValues(t, 101, f.value(t))
	})
	t.Run("reply lost", func(t *testing.T) {
		f := newFaulty(t, srv.Addr(), srv.Addr())
		written := f.d.arm(loseReply)
		done := f.add(ctx, 1)
		<-written
		f.waitApplied(t, 101)
		srv.Stop()
		require.NoError(t, srv.Start())
		require.ErrorIs(t, (<-done).err, ErrUnknownOutcome)
		require.EqualValues(t, 101, f.value(t))
	})
}

// ctx ends with the write in flight: unknown, and ctx's error, both testable.
func TestCancelledInFlightIsUnknown(t *testing.T) {
	srv := zktest.NewServer(t)
	f := newFaulty(t, srv.Addr(), srv.Addr())
	ctx, cancel := context.WithCancel(testCtx(t))
	written := f.d.arm(loseRequest)
	done := f.add(ctx, 1)
	<-written
	cancel()
	err := (<-done).err
	require.ErrorIs(t, err, ErrUnknownOutcome)
	require.ErrorIs(t, err, context.Canceled)
	f.d.cut()
}

// The client closes with the write in flight: unknown, and ErrClosed.
func TestClosedInFlightIsUnknown(t *testing.T) {
	srv := zktest.NewServer(t)
	f := newFaulty(t, srv.Addr(), srv.Addr())
	written := f.d.arm(loseRequest)
	done := f.add(testCtx(t), 1)
	<-written
	require.NoError(t, f.n.client.Close())
	err := (<-done).err
	require.ErrorIs(t, err, ErrUnknownOutcome)
	require.ErrorIs(t, err, framework.ErrClosed)
}

// Set is one unconditional write, never sent twice: a lost reply is unknown.
func TestSetLostReplyIsUnknown(t *testing.T) {
	srv := zktest.NewServer(t)
	f := newFaulty(t, srv.Addr(), srv.Addr())
	written := f.d.arm(loseReply)
	done := make(chan error, 1)
	go func() { done <- f.n.Set(testCtx(t), 7) }()
	<-written
	f.waitApplied(t, 7)
	f.d.cut()
	require.ErrorIs(t, <-done, ErrUnknownOutcome)
}

// CompareAndSet's lost request is sent again like Add's.
func TestCompareAndSetLostRequest(t *testing.T) {
	srv := zktest.NewServer(t)
	f := newFaulty(t, srv.Addr(), srv.Addr())
	written := f.d.arm(loseRequest)
	done := make(chan error, 1)
	var swapped bool
	go func() {
		var err error
		swapped, err = f.n.CompareAndSet(testCtx(t), 100, 5)
		done <- err
	}()
	<-written
	f.d.cut()
	require.NoError(t, <-done)
	assert.True(t, swapped)
	require.EqualValues(t, 5, f.value(t))
}
