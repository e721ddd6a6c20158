package counter

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// faulty is a counter whose client connects through a faultyDialer, beside an
// observer that reads the node directly.
type faulty struct {
	n        *Counter
	d        *zkrtest.LossyDialer
	observer *framework.Client
}

func newFaulty(t *testing.T, target string, srv string, opts ...framework.Option) faulty {
	d := &zkrtest.LossyDialer{Target: target}
	c := newClient(t, []string{srv}, append(opts, framework.WithDialer(d.Dial))...)
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

// addInjured starts an Add of 1 whose write suffers fault, and returns once it has:
// for LoseReply, once the server applied it, from 100 to 101.
func (f faulty) addInjured(t *testing.T, ctx context.Context, fault zkrtest.Loss) <-chan addResult {
	t.Helper()
	written := f.d.Arm(fault)
	ch := make(chan addResult, 1)
	go func() {
		r, err := f.n.Add(ctx, 1)
		ch <- addResult{r, err}
	}()
	<-written
	if fault == zkrtest.LoseReply {
		f.waitApplied(t, 101)
	}
	return ch
}

type addResult struct {
	r   Result
	err error
}

// A write loses its request or its reply to a connection cut, a session expiry or a
// server restart, with or without another writer adding 10 meanwhile. A lost request
// is sent again and applies once. A lost reply makes the second send stale: then the
// node shows our value at the next version, which another writer adding the same
// could have written too, or has moved on further, and nothing proves whose the write
// was; Curator adds again here, we say that we do not know. A request lost while
// another writer took the version is proven not applied (the next version holds the
// other value), and Add tries again.
func TestLostWrites(t *testing.T) {
	cut := func(t *testing.T, f faulty, _ *zktest.Server, _ *zktest.Proxy) { f.d.Cut() }
	expire := func(t *testing.T, _ faulty, _ *zktest.Server, proxy *zktest.Proxy) {
		require.NoError(t, proxy.ExpireSession(testCtx(t), 2*time.Second))
	}
	restart := func(t *testing.T, _ faulty, srv *zktest.Server, _ *zktest.Proxy) {
		srv.Stop()
		require.NoError(t, srv.Start())
	}
	for _, tc := range []struct {
		fault      string
		inject     func(*testing.T, faulty, *zktest.Server, *zktest.Proxy)
		lose       zkrtest.Loss
		interloper bool
		want       *Result // nil: ErrUnknownOutcome
		final      int64
	}{
		{"cut", cut, zkrtest.LoseRequest, false, &Result{100, 101}, 101},
		{"cut", cut, zkrtest.LoseReply, false, nil, 101},
		{"cut", cut, zkrtest.LoseRequest, true, &Result{110, 111}, 111},
		{"cut", cut, zkrtest.LoseReply, true, nil, 111},
		{"session expiry", expire, zkrtest.LoseRequest, false, &Result{100, 101}, 101},
		{"session expiry", expire, zkrtest.LoseReply, false, nil, 101},
		{"server restart", restart, zkrtest.LoseRequest, false, &Result{100, 101}, 101},
		{"server restart", restart, zkrtest.LoseReply, false, nil, 101},
	} {
		name := fmt.Sprintf("%s, %v, interloper %v", tc.fault, tc.lose, tc.interloper)
		t.Run(name, func(t *testing.T) {
			srv := zktest.NewServer(t)
			proxy := zktest.NewProxy(t, srv.Addr())
			ctx := testCtx(t)
			f := newFaulty(t, proxy.Addr(), srv.Addr(), framework.WithSessionTimeout(2*time.Second))
			session := f.n.client.SessionID()
			done := f.addInjured(t, ctx, tc.lose)
			if tc.interloper {
				_, err := newCounter(t, f.observer, "/faults").Add(ctx, 10)
				require.NoError(t, err)
			}
			tc.inject(t, f, srv, proxy)
			a := <-done
			if tc.want == nil {
				require.ErrorIs(t, a.err, ErrUnknownOutcome)
			} else {
				require.NoError(t, a.err)
				require.Equal(t, *tc.want, a.r)
			}
			require.EqualValues(t, tc.final, f.value(t), "applied once")
			if tc.fault == "session expiry" {
				require.NotEqual(t, session, f.n.client.SessionID())
			}
		})
	}
}

// ctx ends with the write in flight: unknown, and ctx's error, both testable.
func TestCancelledInFlightIsUnknown(t *testing.T) {
	srv := zkrtest.Server(t)
	f := newFaulty(t, srv.Addr(), srv.Addr())
	ctx, cancel := context.WithCancel(testCtx(t))
	done := f.addInjured(t, ctx, zkrtest.LoseRequest)
	cancel()
	err := (<-done).err
	require.ErrorIs(t, err, ErrUnknownOutcome)
	require.ErrorIs(t, err, context.Canceled)
	f.d.Cut()
}

// The client closes with the write in flight: unknown, and ErrClosed.
func TestClosedInFlightIsUnknown(t *testing.T) {
	srv := zkrtest.Server(t)
	f := newFaulty(t, srv.Addr(), srv.Addr())
	done := f.addInjured(t, testCtx(t), zkrtest.LoseRequest)
	require.NoError(t, f.n.client.Close())
	err := (<-done).err
	require.ErrorIs(t, err, ErrUnknownOutcome)
	require.ErrorIs(t, err, framework.ErrClosed)
}

// Set is one unconditional write, never sent twice: a lost reply is unknown.
func TestSetLostReplyIsUnknown(t *testing.T) {
	srv := zkrtest.Server(t)
	f := newFaulty(t, srv.Addr(), srv.Addr())
	written := f.d.Arm(zkrtest.LoseReply)
	done := make(chan error, 1)
	go func() { done <- f.n.Set(testCtx(t), 7) }()
	<-written
	f.waitApplied(t, 7)
	f.d.Cut()
	require.ErrorIs(t, <-done, ErrUnknownOutcome)
}

// CompareAndSet's lost request is sent again like Add's.
func TestCompareAndSetLostRequest(t *testing.T) {
	srv := zkrtest.Server(t)
	f := newFaulty(t, srv.Addr(), srv.Addr())
	written := f.d.Arm(zkrtest.LoseRequest)
	done := make(chan error, 1)
	var swapped bool
	go func() {
		var err error
		swapped, err = f.n.CompareAndSet(testCtx(t), 100, 5)
		done <- err
	}()
	<-written
	f.d.Cut()
	require.NoError(t, <-done)
	assert.True(t, swapped)
	require.EqualValues(t, 5, f.value(t))
}

// An Add whose node another client makes first, and which is then deleted and made
// again by others between its reads and its write, never writes unconditionally:
// its write stays conditional on a version it read, and the others' add counts. The
// node appears (our create is refused), vanishes before our read of it, and comes
// back with 100 just before our write goes.
func TestAddNeverWritesBlind(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	d := &zkrtest.LossyDialer{}
	n := newCounter(t, newClient(t, []string{srv.Addr()}, framework.WithDialer(d.Dial)), "/blind")
	oc := newClient(t, []string{srv.Addr()})
	other := newCounter(t, oc, "/blind")
	// On go-zookeeper's sending goroutine: a failure is recorded, not required there.
	var otherErr error
	record := func(err error) {
		if err != nil && otherErr == nil {
			otherErr = err
		}
	}
	d.BeforeNextOf(zkrtest.OpCreate, func() { // our create finds the node made
		_, err := oc.Create(ctx, "/blind", encode(0))
		record(err)
		d.BeforeNextOf(zkrtest.OpGetData, func() { // our next read finds it gone
			record(oc.Delete(ctx, "/blind", -1))
			d.BeforeNext(func() { // and our write finds it back, at 100
				_, err := other.Add(ctx, 100)
				record(err)
			})
		})
	})
	r, err := n.Add(ctx, 5)
	require.NoError(t, err)
	require.NoError(t, otherErr)
	v, err := other.Get(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 105, v, "the other client's add of 100 kept")
	require.Equal(t, Result{Pre: 100, Post: 105}, r)
}
