package discovery

import (
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Option configures a Discovery. An option given a value it cannot take makes New
// return an error wrapping ErrInvalid that names the option.
type Option func(*options) error

type options struct {
	log *slog.Logger
}

// WithLogger logs what a query skips (a node whose data is not an instance) and
// what a provider leaves out. Default: the client's logger. A nil l is refused.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) error {
		if l == nil {
			return errors.New("WithLogger: nil logger")
		}
		o.log = l
		return nil
	}
}

// ProviderOption configures a Provider. An option given a value it cannot take
// makes NewProvider return an error wrapping ErrInvalid that names the option.
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
// be quick and must not call the Provider. Default: no filter. A nil keep is
// refused.
func WithFilter(keep func(Instance) bool) ProviderOption {
	return func(o *providerOptions) error {
		if keep == nil {
			return errors.New("WithFilter: nil filter")
		}
		o.filter = keep
		return nil
	}
}

// DownAfter makes Pick skip an instance once NoteError has been called for it
// errors times within forget of the first, until forget has passed since that
// first error (Curator's DownInstancePolicy). Default: 2 errors, 30 seconds. Both
// must be positive.
func DownAfter(errors int, forget time.Duration) ProviderOption {
	return func(o *providerOptions) error {
		if errors < 1 || forget <= 0 {
			return fmt.Errorf("DownAfter: errors (%d) and forget (%v) must be positive", errors, forget)
		}
		o.errors, o.forget = errors, forget
		return nil
	}
}
