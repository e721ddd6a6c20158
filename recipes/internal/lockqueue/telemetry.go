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
	Acquired  = "acquired"
	TimedOut  = instrument.TimedOut  // its context's deadline passed
	Cancelled = instrument.Cancelled // its context was cancelled, or the recipe closed
	Refused   = "refused"            // it would have waited, and was asked not to (TryAcquire)
	Failed    = instrument.Failed    // any other error: the client closed, an ACL refused, retries ran out
)

var acquisitionOutcomes = []string{Acquired, TimedOut, Cancelled, Refused, Failed}

// acquisitionOutcome names how an acquisition ended.
func acquisitionOutcome(err error) string {
	switch {
	case err == nil:
		return Acquired
	case errors.Is(err, ErrWouldBlock):
		return Refused
	}
	return instrument.Outcome(err)
}

// telemetry is what a queue's recipe reports through: nil for a recipe that reports
// nothing, its metrics nil when the client has no meter provider, its tracer nil when
// it has no tracer provider. Each method returns at once for what is off, so that an
// unconfigured client neither reads the clock nor allocates. The attribute sets are
// made once, with the instruments.
type telemetry struct {
	recipe   string
	election bool
	metrics  *recipeMetrics
	tracer   trace.Tracer
	span     string // the span's name: "<recipe> acquire"
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

func newTelemetry(c *framework.Client, recipe string, election bool) *telemetry {
	mp, tp := c.MeterProvider(), c.TracerProvider()
	if recipe == "" || (!framework.Metering(mp) && !framework.Tracing(tp)) {
		return nil
	}
	t := &telemetry{recipe: recipe, election: election, span: recipe + " acquire"}
	if framework.Tracing(tp) {
		t.tracer = tp.Tracer(framework.Scope)
	}
	if framework.Metering(mp) {
		t.metrics = newRecipeMetrics(c, mp.Meter(framework.Scope), recipe)
	}
	return t
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
		c.Logger().Warn("zkrecipes: making the "+recipe+" instruments", "error", err)
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
	t       *telemetry
	ctx     context.Context
	start   time.Time
	waiting bool
	span    trace.Span
}

// Begin starts measuring an acquisition of q's recipe that the recipe makes of
// several steps of its own (a semaphore's lock, then its leases): the steps are then
// acquired with Options.Step. wait says whether it may wait for others.
func (q *Queue) Begin(ctx context.Context, wait bool) Acquisition {
	t := q.telemetry()
	if t == nil {
		return Acquisition{}
	}
	a := Acquisition{t: t, ctx: ctx, start: time.Now(), waiting: wait}
	if t.tracer != nil {
		_, a.span = t.tracer.Start(ctx, t.span, trace.WithAttributes(
			attribute.String("recipe", t.recipe), attribute.String("path", q.Path)))
	}
	if m := t.metrics; m != nil && wait {
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
	if a.t == nil {
		return
	}
	out := acquisitionOutcome(err)
	if m := a.t.metrics; m != nil {
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
	if out == Failed {
		a.span.RecordError(err)
		a.span.SetStatus(codes.Error, err.Error())
	}
	a.span.End()
}

// granted counts a hold's start; it returns when it started, for ended.
func (t *telemetry) granted() time.Time {
	if t == nil || t.metrics == nil {
		return time.Time{}
	}
	if t.election {
		t.metrics.leadership.Add(context.Background(), 1, t.metrics.gained...)
	}
	return time.Now()
}

// ended records a hold that started at since, released or given up.
func (t *telemetry) ended(since time.Time) {
	if t == nil || t.metrics == nil {
		return
	}
	t.metrics.hold.Record(context.Background(), time.Since(since).Seconds(), t.metrics.record...)
	if t.election {
		t.metrics.leadership.Add(context.Background(), 1, t.metrics.ended...)
	}
}

// lost counts a hold lost.
func (t *telemetry) lost() {
	if t == nil || t.metrics == nil {
		return
	}
	t.metrics.lost.Add(context.Background(), 1, t.metrics.add...)
}
