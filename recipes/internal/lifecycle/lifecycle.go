package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/zkrecipes/zkrecipes/framework"
)

var (
	// ErrStarted is what each recipe's ErrStarted wraps: a second Start.
	ErrStarted = errors.New("already started")
	// ErrClosed is what each recipe's ErrClosed wraps: a call after Close.
	ErrClosed = errors.New("closed")
)

// Errors are a recipe's ErrStarted and ErrClosed, "area: already started" and
// "area: closed", wrapping this package's.
func Errors(area string) (started, closed error) {
	return fmt.Errorf("%s: %w", area, ErrStarted), fmt.Errorf("%s: %w", area, ErrClosed)
}

// State is a phase of a recipe's life.
type State int32

const (
	Latent  State = iota // made, not started
	Started              // Start has begun
	Closed               // Close has begun: for good
)

// Lifecycle is a recipe's phase. The zero value is Latent. It is safe for concurrent
// use; a recipe whose Start and Close set other fields guards those with its own
// lock.
type Lifecycle struct{ s atomic.Int32 }

// State is the current phase.
func (l *Lifecycle) State() State { return State(l.s.Load()) }

// Start moves from Latent to Started. It returns started if the recipe has started
// already, closed if it is closed: the recipe's own errors (see Errors).
func (l *Lifecycle) Start(started, closed error) error {
	if l.s.CompareAndSwap(int32(Latent), int32(Started)) {
		return nil
	}
	if l.State() == Closed {
		return closed
	}
	return started
}

// Unstart moves from Started back to Latent, after a Start that failed and may be
// tried again; it reports false if Close came meanwhile.
func (l *Lifecycle) Unstart() bool {
	return l.s.CompareAndSwap(int32(Started), int32(Latent))
}

// Close moves to Closed and returns the phase it left: Closed means an earlier Close
// did it already.
func (l *Lifecycle) Close() (was State) { return State(l.s.Swap(int32(Closed))) }

// Context is the context of a recipe's own work: it ends when cancel is called (the
// recipe's Close), or when c closes, and then its cause (context.Cause) is the
// client's, framework.ErrClosed.
func Context(c *framework.Client) (ctx context.Context, cancel context.CancelFunc) {
	return context.WithCancel(c.ForRecipes().Context())
}

// OnClientClose calls fn on a goroutine of its own once c closes (at once if it has
// closed already), unless stop is called first.
func OnClientClose(c *framework.Client, fn func()) (stop func() bool) {
	return context.AfterFunc(c.ForRecipes().Context(), fn)
}

// ClientClosed is nil while c is open; once it has closed, an error saying what
// stopped ("cache: start /x") that wraps framework.ErrClosed.
func ClientClosed(c *framework.Client, what string) error {
	if c.ForRecipes().Context().Err() == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, context.Cause(c.ForRecipes().Context()))
}
