package framework

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
)

// drainBackOff returns the pauses of b up to its first Stop, failing the test if more than
// limit pauses come before it.
func drainBackOff(t *testing.T, b backoff.BackOff, limit int) []time.Duration {
	t.Helper()
	var got []time.Duration
	for range limit + 1 {
		d := b.NextBackOff()
		if d == backoff.Stop {
			return got
		}
		got = append(got, d)
	}
	t.Fatalf("no Stop after %d pauses: %v", limit, got)
	return nil
}

// retryRand is an exponential policy's random source that always returns the
// largest allowed value (n-1) and records the n it was asked for.
type retryRand struct{ asked []int }

func (r *retryRand) top(n int) int { r.asked = append(r.asked, n); return n - 1 }

func exponentialWith(p RetryPolicy, intN func(int) int) RetryPolicy {
	p.(*exponentialPolicy).intN = intN
	return p
}

func TestRetryExponentialBackoffSchedule(t *testing.T) {
	const base = 10 * time.Millisecond

	t.Run("largest draws", func(t *testing.T) {
		r := &retryRand{}
		b := exponentialWith(ExponentialBackoff(base, 4), r.top).NewBackOff()
		require.Equal(t, []time.Duration{base, 3 * base, 7 * base, 15 * base}, drainBackOff(t, b, 10))
		require.Equal(t, []int{2, 4, 8, 16}, r.asked, "retry k draws from [0, 2^(k+1))")
		require.Equal(t, backoff.Stop, b.NextBackOff(), "Stop is final")
	})

	t.Run("zero draw still sleeps base", func(t *testing.T) {
		b := exponentialWith(ExponentialBackoff(base, 3), func(int) int { return 0 }).NewBackOff()
		require.Equal(t, []time.Duration{base, base, base}, drainBackOff(t, b, 10))
	})

	t.Run("no retries", func(t *testing.T) {
		require.Empty(t, drainBackOff(t, ExponentialBackoff(base, 0).NewBackOff(), 0))
	})

	t.Run("maxRetries capped at 29", func(t *testing.T) {
		r := &retryRand{}
		got := drainBackOff(t, exponentialWith(ExponentialBackoff(time.Nanosecond, 1000), r.top).NewBackOff(), 1000)
		require.Len(t, got, 29)
		require.Equal(t, 1<<29, r.asked[28])
		require.Equal(t, time.Duration(1<<29-1), got[28])
	})

	t.Run("overflow saturates", func(t *testing.T) {
		got := drainBackOff(t, exponentialWith(ExponentialBackoff(time.Hour, 29), (&retryRand{}).top).NewBackOff(), 29)
		for i, d := range got {
			require.Positive(t, d, "retry %d", i)
		}
		require.Equal(t, time.Duration(math.MaxInt64), got[28])
	})

	t.Run("real randomness stays in bounds", func(t *testing.T) {
		p := ExponentialBackoff(base, 8)
		for range 200 {
			for k, d := range drainBackOff(t, p.NewBackOff(), 8) {
				require.GreaterOrEqual(t, d, base)
				require.LessOrEqual(t, d, base*time.Duration(1<<(k+1)-1))
			}
		}
	})
}

func TestRetryBoundedExponentialBackoffSchedule(t *testing.T) {
	const base, max = 10 * time.Millisecond, 100 * time.Millisecond
	r := &retryRand{}
	b := exponentialWith(BoundedExponentialBackoff(base, max, 6), r.top).NewBackOff()
	require.Equal(t, []time.Duration{base, 3 * base, 7 * base, max, max, max}, drainBackOff(t, b, 10))

	// The cap also holds where the unbounded product would overflow.
	got := drainBackOff(t, exponentialWith(BoundedExponentialBackoff(time.Hour, 2*time.Hour, 100), r.top).NewBackOff(), 29)
	require.Len(t, got, 29)
	require.Equal(t, 2*time.Hour, got[28])

	// base == max is a constant schedule.
	require.Equal(t, []time.Duration{base, base}, drainBackOff(t, BoundedExponentialBackoff(base, base, 2).NewBackOff(), 2))
}

func TestRetryNTimesSchedule(t *testing.T) {
	const sleep = 5 * time.Millisecond
	require.Equal(t, []time.Duration{sleep, sleep, sleep}, drainBackOff(t, RetryNTimes(3, sleep).NewBackOff(), 10))
	require.Empty(t, drainBackOff(t, RetryNTimes(0, sleep).NewBackOff(), 0))
	require.Equal(t, []time.Duration{0, 0}, drainBackOff(t, RetryNTimes(2, 0).NewBackOff(), 10))
}

func TestRetryOneTimeSchedule(t *testing.T) {
	b := RetryOneTime(7 * time.Millisecond).NewBackOff()
	require.Equal(t, []time.Duration{7 * time.Millisecond}, drainBackOff(t, b, 10))
	require.Equal(t, backoff.Stop, b.NextBackOff())
}

// retryClock is a manually advanced clock for RetryUntilElapsed.
type retryClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *retryClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *retryClock) advance(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }

func untilElapsedWith(p RetryPolicy, c *retryClock) RetryPolicy {
	p.(*untilElapsedPolicy).now = c.now
	return p
}

func TestRetryUntilElapsedSchedule(t *testing.T) {
	const budget, sleep = 10 * time.Second, 3 * time.Second
	c := &retryClock{t: time.Unix(1000, 0)}
	p := untilElapsedWith(RetryUntilElapsed(budget, sleep), c)
	b := p.NewBackOff()

	require.Equal(t, sleep, b.NextBackOff(), "elapsed 0")
	require.Equal(t, sleep, b.NextBackOff(), "the clock, not the call count, decides")
	c.advance(7 * time.Second)
	require.Equal(t, sleep, b.NextBackOff(), "elapsed 7s + sleep 3s = budget: allowed")
	c.advance(time.Nanosecond)
	require.Equal(t, backoff.Stop, b.NextBackOff(), "one nanosecond more would overshoot")

	b.Reset()
	require.Equal(t, sleep, b.NextBackOff(), "Reset restarts the budget")

	// A sleep longer than the budget never allows a retry, and does not overflow.
	require.Equal(t, backoff.Stop, untilElapsedWith(RetryUntilElapsed(budget, budget+1), c).NewBackOff().NextBackOff())
	require.Equal(t, backoff.Stop,
		untilElapsedWith(RetryUntilElapsed(time.Nanosecond, time.Duration(math.MaxInt64)), c).NewBackOff().NextBackOff())

	// Zero sleep retries until the budget is spent.
	b = untilElapsedWith(RetryUntilElapsed(budget, 0), c).NewBackOff()
	c.advance(budget)
	require.Equal(t, time.Duration(0), b.NextBackOff())
	c.advance(time.Nanosecond)
	require.Equal(t, backoff.Stop, b.NextBackOff())

	// The default clock is the real one.
	require.Equal(t, time.Millisecond, RetryUntilElapsed(time.Hour, time.Millisecond).NewBackOff().NextBackOff())
}

func TestRetryForeverSchedule(t *testing.T) {
	b := RetryForever(time.Millisecond).NewBackOff()
	for i := range 1000 {
		require.Equal(t, time.Millisecond, b.NextBackOff(), "call %d", i)
	}
}

func TestRetryBackOffsAreIndependent(t *testing.T) {
	t.Run("counters", func(t *testing.T) {
		for _, p := range []RetryPolicy{
			RetryNTimes(2, time.Millisecond),
			RetryOneTime(time.Millisecond),
			exponentialWith(ExponentialBackoff(time.Millisecond, 2), func(int) int { return 0 }),
			exponentialWith(BoundedExponentialBackoff(time.Millisecond, time.Second, 2), func(int) int { return 0 }),
		} {
			a, b := p.NewBackOff(), p.NewBackOff()
			want := drainBackOff(t, a, 10)
			require.NotEmpty(t, want)
			require.Equal(t, want, drainBackOff(t, b, 10), "%T: exhausting one BackOff spent the other's retries", p)
		}
	})

	t.Run("budgets", func(t *testing.T) {
		c := &retryClock{t: time.Unix(1000, 0)}
		p := untilElapsedWith(RetryUntilElapsed(time.Second, 0), c)
		early := p.NewBackOff()
		c.advance(time.Second)
		late := p.NewBackOff()
		c.advance(time.Nanosecond)
		require.Equal(t, backoff.Stop, early.NextBackOff())
		require.Equal(t, time.Duration(0), late.NextBackOff(), "a later BackOff has its own budget")
	})

	t.Run("concurrent use of one policy", func(t *testing.T) {
		p := ExponentialBackoff(time.Millisecond, 10)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 50 {
					b, retries := p.NewBackOff(), 0
					for b.NextBackOff() != backoff.Stop && retries <= 10 {
						retries++
					}
					if retries != 10 {
						t.Errorf("got %d retries, want 10", retries)
					}
				}
			})
		}
		wg.Wait()
	})
}

func TestRetryReset(t *testing.T) {
	c := &retryClock{t: time.Unix(1000, 0)}
	for _, p := range []RetryPolicy{
		RetryNTimes(3, time.Millisecond),
		RetryOneTime(0),
		exponentialWith(ExponentialBackoff(time.Millisecond, 5), (&retryRand{}).top),
		exponentialWith(BoundedExponentialBackoff(time.Millisecond, 4*time.Millisecond, 5), (&retryRand{}).top),
		untilElapsedWith(RetryUntilElapsed(time.Second, 300*time.Millisecond), c),
	} {
		b := p.NewBackOff()
		if _, ok := p.(*untilElapsedPolicy); ok {
			require.Equal(t, 300*time.Millisecond, b.NextBackOff())
			c.advance(time.Second)
			require.Equal(t, backoff.Stop, b.NextBackOff())
			b.Reset()
			require.Equal(t, 300*time.Millisecond, b.NextBackOff())
			continue
		}
		first := drainBackOff(t, b, 10)
		b.Reset()
		require.Equal(t, first, drainBackOff(t, b, 10), "%T", p)
	}
}

// TestRetryWithBackoffRetry checks the contract the backoff package relies on:
// backoff.Retry calls Reset before the first attempt, then retries until Stop.
func TestRetryWithBackoffRetry(t *testing.T) {
	attempts := 0
	err := backoff.Retry(func() error { attempts++; return zk.ErrConnectionClosed }, RetryNTimes(3, 0).NewBackOff())
	require.ErrorIs(t, err, zk.ErrConnectionClosed)
	require.Equal(t, 4, attempts, "one attempt and three retries")
}

func TestRetryValidate(t *testing.T) {
	tests := []struct {
		policy RetryPolicy
		err    string // "" when valid
	}{
		{ExponentialBackoff(time.Millisecond, 0), ""},
		{ExponentialBackoff(time.Millisecond, 29), ""},
		{ExponentialBackoff(time.Millisecond, 100), ""},
		{ExponentialBackoff(0, 3), "ExponentialBackoff: base 0s <= 0"},
		{ExponentialBackoff(-time.Second, 3), "ExponentialBackoff: base -1s <= 0"},
		{ExponentialBackoff(time.Millisecond, -1), "ExponentialBackoff: maxRetries -1 < 0"},
		{BoundedExponentialBackoff(time.Millisecond, time.Second, 3), ""},
		{BoundedExponentialBackoff(time.Second, time.Second, 3), ""},
		{BoundedExponentialBackoff(0, time.Second, 3), "BoundedExponentialBackoff: base 0s <= 0"},
		{BoundedExponentialBackoff(time.Second, time.Millisecond, 3), "BoundedExponentialBackoff: max 1ms < base 1s"},
		{BoundedExponentialBackoff(time.Second, 2*time.Second, -5), "BoundedExponentialBackoff: maxRetries -5 < 0"},
		{RetryNTimes(0, 0), ""},
		{RetryNTimes(3, time.Second), ""},
		{RetryNTimes(-1, time.Second), "RetryNTimes: n -1 < 0"},
		{RetryNTimes(1, -time.Millisecond), "RetryNTimes: sleep -1ms < 0"},
		{RetryOneTime(0), ""},
		{RetryOneTime(-time.Millisecond), "RetryOneTime: sleep -1ms < 0"},
		{RetryUntilElapsed(time.Second, 0), ""},
		{RetryUntilElapsed(time.Second, 2*time.Second), ""},
		{RetryUntilElapsed(0, time.Millisecond), "RetryUntilElapsed: maxElapsed 0s <= 0"},
		{RetryUntilElapsed(time.Second, -time.Millisecond), "RetryUntilElapsed: sleep -1ms < 0"},
		{RetryForever(time.Millisecond), ""},
		{RetryForever(0), "RetryForever: sleep 0s <= 0"},
		{RetryForever(-time.Second), "RetryForever: sleep -1s <= 0"},
	}
	for i, tt := range tests {
		name := fmt.Sprintf("case %d (%T)", i, tt.policy)
		v, ok := tt.policy.(interface{ Validate() error })
		require.True(t, ok, "%s has no Validate", name)
		err := v.Validate()
		b := tt.policy.NewBackOff()
		if tt.err == "" {
			require.NoError(t, err, name)
			continue
		}
		require.ErrorIs(t, err, ErrInvalidRetryPolicy, name)
		require.EqualError(t, err, "framework: invalid retry policy: "+tt.err, name)
		// An invalid policy still works: it stops at once, before and after Reset.
		require.Equal(t, backoff.Stop, b.NextBackOff(), name)
		b.Reset()
		require.Equal(t, backoff.Stop, b.NextBackOff(), name)
	}
}

func TestIsRetryable(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{zk.ErrConnectionClosed, true},
		{zk.ErrNoServer, true},
		{zk.ErrSessionMoved, true},
		{zk.ErrClosing, true},
		{fmt.Errorf("get /a: %w", zk.ErrConnectionClosed), true},
		{fmt.Errorf("outer: %w", fmt.Errorf("inner: %w", zk.ErrNoServer)), true},
		{errors.Join(io.EOF, zk.ErrSessionMoved), true},
		{zk.ErrSessionExpired, false},
		{fmt.Errorf("get /a: %w", zk.ErrSessionExpired), false},
		{zk.ErrNoNode, false},
		{zk.ErrNodeExists, false},
		{zk.ErrBadVersion, false},
		{zk.ErrNoAuth, false},
		{zk.ErrAuthFailed, false},
		{context.Canceled, false},
		{context.DeadlineExceeded, false},
		{fmt.Errorf("wait: %w", context.DeadlineExceeded), false},
		// A wait for a connection that ran out is retryable; one its context ended is not.
		{&ConnectError{Err: zk.ErrNoServer, Last: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}}, true},
		{&ConnectError{Err: context.Canceled, Last: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}}, false},
		{errors.New(zk.ErrConnectionClosed.Error()), false}, // same text, different error
		// go-zookeeper passes on the raw error of a failed socket write.
		{io.EOF, true},
		{&net.OpError{Op: "write", Net: "tcp", Err: syscall.EPIPE}, true},
		{fmt.Errorf("write: %w", syscall.ECONNRESET), true},
		{os.ErrDeadlineExceeded, true},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, IsRetryable(tt.err), "%v", tt.err)
	}
}
