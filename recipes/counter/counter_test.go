package counter

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

func TestAddGetSetCompareAndSet(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	n := newCounter(t, c, "/app/counters/jobs")

	v, err := n.Get(ctx)
	require.NoError(t, err)
	require.Zero(t, v, "a missing counter is 0")
	ok, _, err := c.Exists(ctx, "/app")
	require.NoError(t, err)
	require.False(t, ok, "Get creates nothing")

	r, err := n.Add(ctx, 5)
	require.NoError(t, err)
	require.Equal(t, Result{Pre: 0, Post: 5}, r)
	r, err = n.Add(ctx, -7)
	require.NoError(t, err)
	require.Equal(t, Result{Pre: 5, Post: -2}, r)

	// Curator's layout: 8 bytes, big-endian, in a persistent node under containers.
	data, stat, err := c.Get(ctx, "/app/counters/jobs")
	require.NoError(t, err)
	require.Equal(t, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}, data)
	require.Zero(t, stat.EphemeralOwner)

	swapped, err := n.CompareAndSet(ctx, 3, 10)
	require.NoError(t, err)
	require.False(t, swapped, "the counter holds -2, not 3")
	swapped, err = n.CompareAndSet(ctx, -2, 10)
	require.NoError(t, err)
	require.True(t, swapped)
	require.NoError(t, n.Set(ctx, 42))
	v, err = n.Get(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 42, v)

	// Overflow wraps, as Java's long does.
	require.NoError(t, n.Set(ctx, 1<<63-1))
	r, err = n.Add(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, Result{Pre: 1<<63 - 1, Post: -1 << 63}, r)
}

func TestWritesOnAMissingNodeStartFromZero(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})

	swapped, err := newCounter(t, c, "/cas/a").CompareAndSet(ctx, 0, 7)
	require.NoError(t, err)
	require.True(t, swapped, "a missing counter holds 0")
	require.NoError(t, newCounter(t, c, "/set/a").Set(ctx, 9))
	r, err := newCounter(t, c, "/set/a").Add(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, Result{Pre: 9, Post: 10}, r)
}

func TestContainerParentsGoWithTheNode(t *testing.T) {
	srv := zktest.NewServer(t, zktest.WithContainerCheckInterval(100*time.Millisecond))
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	_, err := newCounter(t, c, "/app/counters/x").Add(ctx, 1)
	require.NoError(t, err)
	require.NoError(t, c.Delete(ctx, "/app/counters/x", -1))
	require.Eventually(t, func() bool {
		ok, _, err := c.Exists(ctx, "/app")
		return err == nil && !ok
	}, wait, 50*time.Millisecond, "the parents were made as containers, as Curator makes them")
}

// Many sessions add at once: every Add either succeeds, reporting a step of the
// counter no other Add reports, or gives up; the counter ends at the sum of those
// that succeeded.
func TestConcurrentAddsEndAtTheExactSum(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
	}{
		{"optimistic", []Option{WithRetryPolicy(framework.RetryNTimes(3, time.Millisecond))}},
		{"promoted to a lock", []Option{WithRetryPolicy(framework.RetryNTimes(1, 0)), PromotedToLock("/locks/hits")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := zkrtest.Server(t)
			ctx := testCtx(t)
			const sessions, adds = 6, 15
			var (
				mu       sync.Mutex
				sum      int64
				gaveUp   int
				seenPres = map[int64]bool{}
				wg       sync.WaitGroup
			)
			for i := range sessions {
				n := newCounter(t, newClient(t, []string{srv.Addr()}), "/hits", tc.opts...)
				delta := int64(i + 1)
				wg.Go(func() {
					for range adds {
						r, err := n.Add(ctx, delta)
						mu.Lock()
						switch {
						case errors.Is(err, ErrGaveUp):
							gaveUp++
						case err != nil:
							t.Error(err)
						default:
							assert.Equal(t, r.Pre+delta, r.Post)
							assert.False(t, seenPres[r.Pre], "two adds saw the same value %d", r.Pre)
							seenPres[r.Pre] = true
							sum += delta
						}
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			v, err := newCounter(t, newClient(t, []string{srv.Addr()}), "/hits").Get(ctx)
			require.NoError(t, err)
			require.Equal(t, sum, v)
			t.Logf("%d adds gave up", gaveUp)
		})
	}
}

// With no optimistic retry, a write that loses its race goes on under the lock:
// Curator's mutex, its node named as Curator names it, gone afterwards.
func TestPromotedToLockTriesAgainUnderTheMutex(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	d := &zkrtest.LossyDialer{}
	n := newCounter(t, newClient(t, []string{srv.Addr()}, framework.WithDialer(d.Dial)), "/promoted",
		WithRetryPolicy(framework.RetryNTimes(0, 0)), PromotedToLock("/locks/promoted"))
	observer := newClient(t, []string{srv.Addr()})
	other := newCounter(t, observer, "/promoted")
	_, err := n.Add(ctx, 1)
	require.NoError(t, err)

	var underLock []string
	d.BeforeNext(func() {
		_, err := other.Add(ctx, 10) // our version is stale now
		assert.NoError(t, err)
		d.BeforeNext(func() { underLock, _ = zkrtest.List(observer, "/locks/promoted") })
	})
	r, err := n.Add(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, Result{Pre: 11, Post: 12}, r)
	require.Len(t, underLock, 1, "the second try ran under the lock")
	require.Regexp(t, `^_c_[0-9a-f-]{36}-lock-\d{10}$`, underLock[0])
	require.Empty(t, zkrtest.Children(t, observer, "/locks/promoted"), "released")

	// Without promotion the same race is lost for good.
	plain := newCounter(t, n.client, "/promoted", WithRetryPolicy(framework.RetryNTimes(0, 0)))
	d.BeforeNext(func() {
		_, err := other.Add(ctx, 10)
		assert.NoError(t, err)
	})
	_, err = plain.Add(ctx, 1)
	require.ErrorIs(t, err, ErrGaveUp)
	v, err := plain.Get(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 22, v, "the Add that gave up wrote nothing")
}

func TestCancelledBeforeSendingWritesNothing(t *testing.T) {
	srv := zkrtest.Server(t)
	c := newClient(t, []string{srv.Addr()})
	n := newCounter(t, c, "/cancelled")
	ctx, cancel := context.WithCancel(testCtx(t))
	cancel()
	_, err := n.Add(ctx, 1)
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, ErrUnknownOutcome)
	ok, _, err := c.Exists(testCtx(t), "/cancelled")
	require.NoError(t, err)
	require.False(t, ok)

	// Nor when the counter would send its write without a read, on the version it
	// remembers.
	for range 3 { // the third add is a guess
		_, err = n.Add(testCtx(t), 1)
		require.NoError(t, err)
	}
	_, err = n.Add(ctx, 1)
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, ErrUnknownOutcome)
	v, err := n.Get(testCtx(t))
	require.NoError(t, err)
	require.EqualValues(t, 3, v, "nothing written")
}

// The requests each call sends, counted on the wire: the first write to a missing
// node makes it first; an Add is a read and a conditional write, as Curator's, until
// a read finds the node where this counter left it; from then on, while nobody else
// writes, an Add is one conditional write. Another writer's add costs the next guess
// a refused write and the read it had saved, and stops the guessing.
func TestRequestsPerCall(t *testing.T) {
	const create, getData, setData = 1, 4, 5
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	d := &zkrtest.LossyDialer{}
	n := newCounter(t, newClient(t, []string{srv.Addr()}, framework.WithDialer(d.Dial)), "/requests")
	other := newCounter(t, newClient(t, []string{srv.Addr()}), "/requests")
	d.Requests()

	_, err := n.Add(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, map[int32]int{getData: 1, create: 1, setData: 1}, d.Requests(), "the first Add")
	_, err = n.Add(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, map[int32]int{getData: 1, setData: 1}, d.Requests(), "an Add that finds the node as it left it")
	r, err := n.Add(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, Result{Pre: 2, Post: 3}, r)
	require.Equal(t, map[int32]int{setData: 1}, d.Requests(), "an Add nobody else wrote before")

	_, err = other.Add(ctx, 10)
	require.NoError(t, err)
	d.Requests()
	r, err = n.Add(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, Result{Pre: 13, Post: 14}, r, "a stale guess is never applied")
	require.Equal(t, map[int32]int{setData: 2, getData: 1}, d.Requests(), "an Add after another writer's")
	_, err = n.Add(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, map[int32]int{getData: 1, setData: 1}, d.Requests(), "an Add after a stale guess reads first")

	_, err = n.CompareAndSet(ctx, 15, 20)
	require.NoError(t, err)
	require.Equal(t, map[int32]int{setData: 1}, d.Requests(), "a CompareAndSet")
	ok, err := n.CompareAndSet(ctx, 15, 30)
	require.NoError(t, err)
	require.False(t, ok)
	require.Equal(t, map[int32]int{getData: 1}, d.Requests(), "a CompareAndSet the memory declines reads to be sure")
	require.NoError(t, n.Set(ctx, 9))
	require.Equal(t, map[int32]int{setData: 1}, d.Requests(), "a Set")
	_, err = n.Get(ctx)
	require.NoError(t, err)
	require.Equal(t, map[int32]int{getData: 1}, d.Requests(), "a Get")
}

// cancellingPolicy pauses an hour after a lost race, and cancels the update's
// context as the pause begins.
type cancellingPolicy struct{ cancel context.CancelFunc }

func (p cancellingPolicy) NewBackOff() backoff.BackOff { return p }
func (p cancellingPolicy) Reset()                      {}
func (p cancellingPolicy) NextBackOff() time.Duration  { p.cancel(); return time.Hour }

// A try that lost a race waits for the retry policy's pause, and a context that ends
// during it ends the Add at once, with the context's error: not a gave-up, nor a
// write of unknown outcome.
func TestCancelledDuringThePauseAfterALostRace(t *testing.T) {
	srv := zkrtest.Server(t)
	d := &zkrtest.LossyDialer{}
	ctx, cancel := context.WithCancel(testCtx(t))
	n := newCounter(t, newClient(t, []string{srv.Addr()}, framework.WithDialer(d.Dial)), "/pause",
		WithRetryPolicy(cancellingPolicy{cancel}))
	other := newCounter(t, newClient(t, []string{srv.Addr()}), "/pause")
	_, err := n.Add(testCtx(t), 1)
	require.NoError(t, err)
	d.BeforeNext(func() {
		_, err := other.Add(testCtx(t), 10) // our version is stale now
		assert.NoError(t, err)
	})
	_, err = n.Add(ctx, 1)
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, ErrGaveUp)
	require.NotErrorIs(t, err, ErrUnknownOutcome)
	v, err := other.Get(testCtx(t))
	require.NoError(t, err)
	require.EqualValues(t, 11, v, "the cancelled Add wrote nothing")
}
