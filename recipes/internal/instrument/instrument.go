// Package instrument is what the state recipes (cache, persistent node, group, shared
// value and count, counter, barriers, partitioner) report through, in the manner of
// the lock queue's telemetry: the client's meter and tracer providers, the
// framework's scope and duration buckets, every attribute set made once with its
// instrument, and nothing at all, neither a clock read nor an allocation, when the
// client measures and traces nothing. Attributes are bounded: the recipe and values
// from a fixed list, never a path or a node name (a span may carry the path).
package instrument

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/zkrecipes/zkrecipes/framework"
)

// The outcomes of a blocking call, the values of an outcome attribute, after the
// lock queue's.
const (
	OK        = "ok"
	TimedOut  = "timed_out" // its context's deadline passed
	Cancelled = "cancelled" // its context was cancelled
	Failed    = "failed"    // any other error
)

// Outcome names how a call that ended with err ended, when the recipe has no more
// precise name for it.
func Outcome(err error) string {
	switch {
	case err == nil:
		return OK
	case errors.Is(err, context.DeadlineExceeded):
		return TimedOut
	case errors.Is(err, context.Canceled):
		return Cancelled
	}
	return Failed
}

// Recipe is one recipe value's telemetry: nil when its client measures and traces
// nothing, and then every method returns at once.
type Recipe struct {
	client *framework.Client
	name   string
	meter  metric.Meter // nil when nothing is measured
	tracer trace.Tracer // nil when nothing is traced
	recipe attribute.KeyValue
}

// New is the telemetry of a value of recipe on c.
func New(c *framework.Client, recipe string) *Recipe {
	mp, tp := c.ForRecipes().MeterProvider(), c.ForRecipes().TracerProvider()
	if !framework.Metering(mp) && !framework.Tracing(tp) {
		return nil
	}
	r := &Recipe{client: c, name: recipe, recipe: attribute.String("recipe", recipe)}
	if framework.Metering(mp) {
		r.meter = mp.Meter(framework.Scope)
	}
	if framework.Tracing(tp) {
		r.tracer = tp.Tracer(framework.Scope)
	}
	return r
}

// Attr is an attribute of an instrument and the values it may take.
type Attr struct {
	Key    string
	Values []string
}

// key is the values of an instrument's attributes, in the order of its Attrs.
type key [2]string

// sets makes the attribute set of every combination of attrs' values, each with the
// recipe. An instrument has at most two attributes besides the recipe (a key's
// length).
func (r *Recipe) sets(attrs []Attr) map[key]attribute.Set {
	out := map[key]attribute.Set{}
	var walk func(i int, k key, kvs []attribute.KeyValue)
	walk = func(i int, k key, kvs []attribute.KeyValue) {
		if i == len(attrs) {
			out[k] = attribute.NewSet(kvs...)
			return
		}
		for _, v := range attrs[i].Values {
			k2 := k
			k2[i] = v
			walk(i+1, k2, append(kvs[:len(kvs):len(kvs)], attribute.String(attrs[i].Key, v)))
		}
	}
	walk(0, key{}, []attribute.KeyValue{r.recipe})
	return out
}

func (r *Recipe) warn(name string, err error) {
	if err != nil {
		r.client.ForRecipes().Logger().Warn("zkrecipes: making the "+r.name+" instrument "+name, "error", err)
	}
}

// Counter counts what happened, by recipe and its attributes.
type Counter struct {
	c    metric.Int64Counter
	opts map[key][]metric.AddOption
}

// Counter makes a counter; nil when nothing is measured.
func (r *Recipe) Counter(name, description, unit string, attrs ...Attr) *Counter {
	if r == nil || r.meter == nil {
		return nil
	}
	c, err := r.meter.Int64Counter(name, metric.WithDescription(description), metric.WithUnit(unit))
	r.warn(name, err)
	m := &Counter{c: c, opts: map[key][]metric.AddOption{}}
	for k, set := range r.sets(attrs) {
		m.opts[k] = []metric.AddOption{metric.WithAttributeSet(set)}
	}
	return m
}

// Add adds n with the attribute values given, in the order of the counter's Attrs.
func (m *Counter) Add(n int64, values ...string) {
	if m == nil {
		return
	}
	var k key
	copy(k[:], values)
	m.c.Add(context.Background(), n, m.opts[k]...)
}

// Gauge is how many there are now, by recipe: an up-down counter.
type Gauge struct {
	c    metric.Int64UpDownCounter
	opts []metric.AddOption
}

// Gauge makes an up-down counter; nil when nothing is measured.
func (r *Recipe) Gauge(name, description, unit string) *Gauge {
	if r == nil || r.meter == nil {
		return nil
	}
	c, err := r.meter.Int64UpDownCounter(name, metric.WithDescription(description), metric.WithUnit(unit))
	r.warn(name, err)
	return &Gauge{c: c, opts: []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(r.recipe))}}
}

// Add adds n, which may be negative.
func (g *Gauge) Add(n int64) {
	if g == nil || n == 0 {
		return
	}
	g.c.Add(context.Background(), n, g.opts...)
}

// Durations is a histogram of durations in seconds, by recipe and its attributes.
type Durations struct {
	h    metric.Float64Histogram
	opts map[key][]metric.RecordOption
}

// Durations makes a histogram with the framework's duration buckets; nil when
// nothing is measured.
func (r *Recipe) Durations(name, description string, attrs ...Attr) *Durations {
	if r == nil || r.meter == nil {
		return nil
	}
	h, err := r.meter.Float64Histogram(name, metric.WithDescription(description),
		metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(framework.DurationBuckets...))
	r.warn(name, err)
	d := &Durations{h: h, opts: map[key][]metric.RecordOption{}}
	for k, set := range r.sets(attrs) {
		d.opts[k] = []metric.RecordOption{metric.WithAttributeSet(set)}
	}
	return d
}

// Since records the time since start, with the attribute values given.
func (d *Durations) Since(start time.Time, values ...string) {
	if d == nil {
		return
	}
	var k key
	copy(k[:], values)
	d.h.Record(context.Background(), time.Since(start).Seconds(), d.opts[k]...)
}

// Now is the time, for a later Since; zero when nothing is measured, so that the
// clock is not even read.
func (r *Recipe) Now() time.Time {
	if r == nil || r.meter == nil {
		return time.Time{}
	}
	return time.Now()
}

// Span is one blocking call's span; the zero Span records nothing.
type Span struct{ span trace.Span }

// Start begins the span "<recipe> <op>" of a call on path, with the recipe and the
// path as attributes, as the lock queue's acquisition spans have.
func (r *Recipe) Start(ctx context.Context, op, path string) Span {
	if r == nil || r.tracer == nil {
		return Span{}
	}
	_, s := r.tracer.Start(ctx, r.name+" "+op, trace.WithAttributes(r.recipe, attribute.String("path", path)))
	return Span{span: s}
}

// End ends the span with its outcome; a Failed one records err.
func (s Span) End(outcome string, err error) {
	if s.span == nil {
		return
	}
	s.span.SetAttributes(attribute.String("outcome", outcome))
	if outcome == Failed && err != nil {
		s.span.RecordError(err)
		s.span.SetStatus(codes.Error, err.Error())
	}
	s.span.End()
}

// Call is one blocking call being measured: its duration and its span. The zero Call
// measures nothing.
type Call struct {
	op    string
	start time.Time
	span  Span
}

// Call begins measuring the call op on path.
func (r *Recipe) Call(ctx context.Context, op, path string) Call {
	if r == nil {
		return Call{}
	}
	return Call{op: op, start: r.Now(), span: r.Start(ctx, op, path)}
}

// End records the call's duration in d, by operation and outcome (d's Attrs), and
// ends its span with the outcome.
func (c Call) End(d *Durations, outcome string, err error) {
	if !c.start.IsZero() {
		d.Since(c.start, c.op, outcome)
	}
	c.span.End(outcome, err)
}
