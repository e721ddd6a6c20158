package framework

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Plumbing is what recipe packages take from their client so as to behave as it
// does: its policies, logger, telemetry providers, and the signals of its
// connection states and of its end. Applications have no use for it; it is kept
// apart from Client's own methods so that they do not see it.
type Plumbing struct{ c *core }

// ForRecipes is the client's plumbing, for recipe packages (see Plumbing). A
// namespaced view has the plumbing of the client it came from.
func (c *Client) ForRecipes() Plumbing { return Plumbing{c.core} }

// Shared is the value that c (a client, or one of its namespaced views) keeps under
// key for a recipe package, made by make on its first use: state kept once per client
// rather than per participant (the lock queue's holders, whom one subscriber to c's
// notifications and one listener of its states serve), so that it lives and goes
// with c, with no package-level map of clients. make runs once per c and key, and
// must not call Shared.
func (p Plumbing) Shared(c *Client, key any, make func() any) any {
	c.sharedMu.Lock()
	defer c.sharedMu.Unlock()
	v, ok := c.shared[key]
	if !ok {
		if c.shared == nil {
			c.shared = map[any]any{}
		}
		v = make()
		c.shared[key] = v
	}
	return v
}

// StateChanges is for recipes whose participants wait on their own, many at once
// (a lock's queued waiters): errorStates counts the states published so far that
// the error policy counts as errors (and every Lost), and next closes when the next
// state is published, or when Close begins (then it is closed already). Taken
// before a look at the server, they tell after it whether an error came meanwhile,
// and wake the participant on any change and on the client's close, with no
// listener of its own.
func (p Plumbing) StateChanges() (errorStates int64, next <-chan struct{}) {
	p.c.mu.Lock()
	defer p.c.mu.Unlock()
	return p.c.link.errorStates, p.c.link.nextChange
}

// Rebuilds counts the times the client has found its ensemble rebuilt (Rebuilt). It
// moves before Rebuilt is published, and so before any request can run in the new
// history: a recipe that compares what it read with what it had (zxids, czxids)
// looks at it before it applies an answer, and starts afresh when it has moved,
// whether or not its listener has heard Rebuilt yet.
func (p Plumbing) Rebuilds() int64 { return p.c.rebuilds.Load() }

// ErrorPolicy is the policy recipes apply to connection states (WithErrorPolicy).
func (p Plumbing) ErrorPolicy() ErrorPolicy { return p.c.opts.errorPolicy }

// Context ends when Close begins, with ErrClosed as its cause (context.Cause). A
// closed client's session is gone with everything it held, and no state change
// follows: recipes use it to mark their holds lost and to end their own work.
func (p Plumbing) Context() context.Context { return p.c.closing }

// RetryPolicy is the client's retry policy, for recipes that restart a step of their
// own (a lock whose node vanished with its session) as often as it allows.
func (p Plumbing) RetryPolicy() RetryPolicy { return p.c.opts.retry }

// MaxDataSize is the most data and path the client sends in one write
// (WithMaxDataSize), for recipes that send their writes themselves.
func (p Plumbing) MaxDataSize() int { return p.c.opts.maxData }

// Logger is the client's logger (WithLogger), for recipes to log through.
func (p Plumbing) Logger() *slog.Logger { return p.c.log }

// MeterProvider is the provider given to WithMeterProvider, for recipes to report
// through: a no-op provider when none was given.
func (p Plumbing) MeterProvider() metric.MeterProvider { return p.c.opts.meterProvider }

// TracerProvider is the provider given to WithTracerProvider, for recipes to trace
// through: a no-op provider when none was given.
func (p Plumbing) TracerProvider() trace.TracerProvider { return p.c.opts.tracerProvider }

// Go runs fn on another goroutine, as the go statement does, but on one of the
// client's request goroutines when one is idle; Close waits for fn as for any
// request (once Close has begun, fn gets a goroutine of its own). go-zookeeper's
// requests block their caller, so a recipe that sends two requests in one flight
// sends one of them from another goroutine: a request goroutine has run requests
// before and has the stack they need, where a new goroutine grows its stack inside
// go-zookeeper on every call (see workers.go). fn must not wait for Close.
func (p Plumbing) Go(fn func()) {
	if !p.c.goRequest(fn) {
		go fn()
	}
}
