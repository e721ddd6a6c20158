package counter

import (
	"errors"
	"fmt"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/internal/args"
)

// Option configures a Counter. An option given a value it cannot take makes New
// return an error wrapping ErrInvalid that names the option.
type Option func(*options) error

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
// framework.BoundedExponentialBackoff(10ms, 1s, 10). A nil policy is refused, and so
// is one of the framework's made with values it cannot use (RetryNTimes(-1, 0)).
func WithRetryPolicy(p framework.RetryPolicy) Option {
	return func(o *options) error {
		if p == nil {
			return errors.New("WithRetryPolicy: nil retry policy")
		}
		if v, ok := p.(interface{ Validate() error }); ok {
			if err := v.Validate(); err != nil {
				return fmt.Errorf("WithRetryPolicy: %w", err)
			}
		}
		o.retry = p
		return nil
	}
}

// PromotedToLock makes a write that lost every optimistic try take the mutex at
// lockPath (recipes/mutex: Curator's InterProcessMutex node names, so Go and Java
// counters promoted to the same path exclude each other) and try again under it, as
// often as the retry policy allows, before giving up. lockPath must be a valid
// absolute path, not the root and not the counter's own. Default: no promotion.
func PromotedToLock(lockPath string) Option {
	return func(o *options) error {
		if err := args.CheckPath(lockPath); err != nil {
			return fmt.Errorf("PromotedToLock: lock path: %w", err)
		}
		o.lockPath, o.promoted = lockPath, true
		return nil
	}
}
