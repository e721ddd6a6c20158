package discovery

import (
	"errors"
	"fmt"
	"time"
)

// ProviderOption configures a Provider.
type ProviderOption func(*providerOptions) error

type providerOptions struct {
	strategy func() strategy
	filter   func(Instance) bool
	errors   int
	forget   time.Duration
}

func defaultProviderOptions() providerOptions {
	return providerOptions{strategy: roundRobin, errors: 2, forget: 30 * time.Second}
}

// RoundRobin makes Pick take the usable instances in turn, fairly across concurrent
// callers. The default.
func RoundRobin() ProviderOption { return withStrategy(roundRobin) }

// Random makes Pick take a usable instance at random. Default: RoundRobin.
func Random() ProviderOption { return withStrategy(random) }

// Sticky makes Pick return the same instance as long as it is usable, then the next
// one in turn. Default: RoundRobin.
func Sticky() ProviderOption { return withStrategy(sticky) }

func withStrategy(s func() strategy) ProviderOption {
	return func(o *providerOptions) error {
		o.strategy = s
		return nil
	}
}

// WithFilter makes Pick skip the instances keep returns false for (Curator's
// InstanceFilter). It runs on Pick's goroutine, once per instance per Pick: it must
// be quick and must not call the Provider. Default: no filter.
func WithFilter(keep func(Instance) bool) ProviderOption {
	return func(o *providerOptions) error {
		if keep == nil {
			return errors.New("nil filter")
		}
		o.filter = keep
		return nil
	}
}

// DownAfter makes Pick skip an instance once NoteError has been called for it
// errors times within forget of the first, until forget has passed since that
// first error (Curator's DownInstancePolicy). Default: 2 errors, 30 seconds.
func DownAfter(errors int, forget time.Duration) ProviderOption {
	return func(o *providerOptions) error {
		if errors < 1 || forget <= 0 {
			return fmt.Errorf("DownAfter(%d, %v): errors and forget must be positive", errors, forget)
		}
		o.errors, o.forget = errors, forget
		return nil
	}
}
