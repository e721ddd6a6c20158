package counter

import (
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
)

// Option configures a Counter.
type Option func(*options)

type options struct {
	retry    framework.RetryPolicy
	lockPath string
	promoted bool
}

// defaultRetry spreads writers that lost a race over a growing, random pause, and
// gives up after ten retries.
var defaultRetry = framework.BoundedExponentialBackoff(10*time.Millisecond, time.Second, 10)

// WithRetryPolicy sets how often, and after which pauses, a write that lost the race
// to another writer (its version was stale) is tried again: Curator's retryPolicy
// argument. It is not the client's policy for connection errors. Default
// framework.BoundedExponentialBackoff(10ms, 1s, 10).
func WithRetryPolicy(p framework.RetryPolicy) Option { return func(o *options) { o.retry = p } }

// PromotedToLock makes a write that lost every optimistic try take the mutex at
// lockPath (recipes/mutex: Curator's InterProcessMutex node names, so Go and Java
// counters promoted to the same path exclude each other) and try again under it, as
// often as the retry policy allows, before giving up. Default: no promotion.
func PromotedToLock(lockPath string) Option {
	return func(o *options) { o.lockPath, o.promoted = lockPath, true }
}
