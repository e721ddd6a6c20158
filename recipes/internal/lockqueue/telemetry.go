package lockqueue

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/internal/instrument"
)

// The outcomes of an acquisition, the values of its outcome attribute: the state
// recipes' for an ended context and other errors.
const (
	acquired  = "acquired"
	timedOut  = instrument.TimedOut  // its context's deadline passed
	cancelled = instrument.Cancelled // its context was cancelled, or the recipe closed
	refused   = "refused"            // it would have waited, and was asked not to (TryAcquire)
	failed    = instrument.Failed    // any other error: the client closed, an ACL refused, retries ran out
)

var acquisitionOutcomes = []string{acquired, timedOut, cancelled, refused, failed}

// acquisitionOutcome names how an acquisition ended.
func acquisitionOutcome(err error) string {
	switch {
	case err == nil:
		return acquired
	case errors.Is(err, ErrWouldBlock):
		return refused
	}
	return instrument.Outcome(err)
}

// Observer is what a queue reports its acquisitions and holds to, under one recipe's
// name: the loop calls it when an acquisition begins, when our node is queued, when
// the acquisition ends, and when a hold is granted, lost and ended. It is nil when
// the client measures and traces nothing, and every method of a nil Observer returns
// at once, neither reading the clock nor allocating: an unmeasured queue pays
// nothing. Its metrics are nil when the client has no meter provider, its tracer nil
// when it has no tracer provider; the attribute sets are made once, with the
// instruments.
type Observer struct {
	recipe       string
	election     bool // grants and ends of holds are leadership changes
	acquisitions bool // false: the recipe measures its acquisitions itself (HoldsOnly)
	metrics      *recipeMetrics
	tracer       trace.Tracer
	span         string // the span's name: "<recipe> acquire"
}

type recipeMetrics struct {
	wait       metric.Float64Histogram
	hold       metric.Float64Histogram
	lost       metric.Int64Counter
	waiters    metric.Int64UpDownCounter
	leadership metric.Int64Counter

	add       []metric.AddOption
	record    []metric.RecordOption
	byOutcome map[string][]metric.RecordOption
	gained    []metric.AddOption
	ended     []metric.AddOption
}

// Observe is the observer of a value of a lock-like recipe on c, named recipe in its
// metrics and spans ("mutex", "rwlock.read"): nil when c measures and traces nothing.
func Observe(c *framework.Client, recipe string) *Observer { return observe(c, recipe, false) }

// ObserveElection is Observe for an election, whose grants and ends of holds are also
// counted as leadership changes.
func ObserveElection(c *framework.Client, recipe string) *Observer {
	return observe(c, recipe, true)
}

func observe(c *framework.Client, recipe string, election bool) *Observer {
	mp, tp := c.ForRecipes().MeterProvider(), c.ForRecipes().TracerProvider()
	if !framework.Metering(mp) && !framework.Tracing(tp) {
		return nil
	}
	o := &Observer{recipe: recipe, election: election, acquisitions: true, span: recipe + " acquire"}
	if framework.Tracing(tp) {
		o.tracer = tp.Tracer(framework.Scope)
	}
	if framework.Metering(mp) {
		o.metrics = newRecipeMetrics(c, mp.Meter(framework.Scope), recipe)
	}
	return o
}

// HoldsOnly is o without its acquisitions, for the queue of a recipe that makes one
// acquisition of several holds (a semaphore's leases) and measures it itself with
// Begin: each hold is still measured.
func (o *Observer) HoldsOnly() *Observer {
	if o == nil || o.metrics == nil {
		return nil // a hold is measured by metrics alone
	}
	holds := *o
	holds.acquisitions = false
	return &holds
}

func newRecipeMetrics(c *framework.Client, meter metric.Meter, recipe string) *recipeMetrics {
	var errs [5]error
	m := &recipeMetrics{byOutcome: map[string][]metric.RecordOption{}}
	m.wait, errs[0] = meter.Float64Histogram("zkrecipes.lock.wait.duration",
		metric.WithDescription("Time from asking for a lock, lease or leadership to the outcome, by recipe and outcome (acquired, timed_out, cancelled, refused, failed)."),
		metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(framework.DurationBuckets...))
	m.hold, errs[1] = meter.Float64Histogram("zkrecipes.lock.hold.duration",
		metric.WithDescription("Time from a grant to its release, or the end of a leadership, by recipe; a lost hold counts until it is released."),
		metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(framework.DurationBuckets...))
	m.lost, errs[2] = meter.Int64Counter("zkrecipes.lock.holds_lost",
		metric.WithDescription("Holds lost before their release (per the client's error policy, or their node deleted), by recipe."),
		metric.WithUnit("{hold}"))
	m.waiters, errs[3] = meter.Int64UpDownCounter("zkrecipes.lock.waiters",
		metric.WithDescription("Participants waiting for a lock, lease or leadership now, by recipe."),
		metric.WithUnit("{waiter}"))
	m.leadership, errs[4] = meter.Int64Counter("zkrecipes.election.leadership_changes",
		metric.WithDescription("Leaderships gained and ended, by recipe and change (gained, ended)."),
		metric.WithUnit("{change}"))
	if err := errors.Join(errs[:]...); err != nil {
		c.ForRecipes().Logger().Warn("zkrecipes: making the "+recipe+" instruments", "error", err)
	}
	r := attribute.String("recipe", recipe)
	recipeOnly := metric.WithAttributeSet(attribute.NewSet(r))
	m.add = []metric.AddOption{recipeOnly}
	m.record = []metric.RecordOption{recipeOnly}
	for _, o := range acquisitionOutcomes {
		m.byOutcome[o] = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(r, attribute.String("outcome", o)))}
	}
	m.gained = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(r, attribute.String("change", "gained")))}
	m.ended = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(r, attribute.String("change", "ended")))}
	return m
}

// Acquisition measures one acquisition: its wait, as a waiter while it waits, and its
// span. The zero Acquisition measures nothing.
type Acquisition struct {
	o       *Observer
	ctx     context.Context
	start   time.Time
	waiting bool
	span    trace.Span
}

// Begin starts measuring an acquisition at the lock path path; wait says whether it
// may wait for others. End ends it.
func (o *Observer) Begin(ctx context.Context, path string, wait bool) Acquisition {
	if o == nil || !o.acquisitions {
		return Acquisition{}
	}
	a := Acquisition{o: o, ctx: ctx, start: time.Now(), waiting: wait}
	if o.tracer != nil {
		_, a.span = o.tracer.Start(ctx, o.span, trace.WithAttributes(
			attribute.String("recipe", o.recipe), attribute.String("path", path)))
	}
	if m := o.metrics; m != nil && wait {
		m.waiters.Add(ctx, 1, m.add...)
	}
	return a
}

// queued records that our node n exists.
func (a *Acquisition) queued(n *Node) {
	if a.span != nil {
		a.span.AddEvent("queued", trace.WithAttributes(attribute.String("node", n.Path)))
	}
}

// End ends the measurement with the acquisition's outcome: err (errors wrapping
// ErrWouldBlock are refusals), and h, what it holds if it holds one thing (or nil).
func (a *Acquisition) End(h *Held, err error) {
	if a.o == nil {
		return
	}
	out := acquisitionOutcome(err)
	if m := a.o.metrics; m != nil {
		m.wait.Record(a.ctx, time.Since(a.start).Seconds(), m.byOutcome[out]...)
		if a.waiting {
			m.waiters.Add(a.ctx, -1, m.add...)
		}
	}
	if a.span == nil {
		return
	}
	a.span.SetAttributes(attribute.String("outcome", out))
	if h != nil {
		a.span.SetAttributes(attribute.String("node", h.Node.Path), attribute.Int64("fencing_token", h.FencingToken()))
	}
	if out == failed {
		a.span.RecordError(err)
		a.span.SetStatus(codes.Error, err.Error())
	}
	a.span.End()
}

// granted counts a hold's start; it returns when it started, for ended.
func (o *Observer) granted() time.Time {
	if o == nil || o.metrics == nil {
		return time.Time{}
	}
	if o.election {
		o.metrics.leadership.Add(context.Background(), 1, o.metrics.gained...)
	}
	return time.Now()
}

// ended records a hold that started at since, released or given up.
func (o *Observer) ended(since time.Time) {
	if o == nil || o.metrics == nil {
		return
	}
	o.metrics.hold.Record(context.Background(), time.Since(since).Seconds(), o.metrics.record...)
	if o.election {
		o.metrics.leadership.Add(context.Background(), 1, o.metrics.ended...)
	}
}

// lost counts a hold lost.
func (o *Observer) lost() {
	if o == nil || o.metrics == nil {
		return
	}
	o.metrics.lost.Add(context.Background(), 1, o.metrics.add...)
}
