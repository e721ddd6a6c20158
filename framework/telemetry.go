package framework

import (
	"context"
	"errors"
	"time"

	"github.com/go-zookeeper/zk"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// Scope is the OpenTelemetry instrumentation scope of the client's and the recipes'
// meters and tracers.
const Scope = "github.com/zkrecipes/zkrecipes"

// WithMeterProvider makes the client, and every recipe on it, report metrics through
// mp (see the package doc for the instruments). Default none: nothing is measured, at
// no cost, and a no-op provider counts as none.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(o *options) error {
		if mp == nil {
			return invalidOption("nil meter provider")
		}
		o.meterProvider = mp
		return nil
	}
}

// WithTracerProvider makes every recipe on the client trace its acquisitions through
// tp: one span each, with the path, the recipe and the outcome. Default none: no
// spans, at no cost, and a no-op provider counts as none.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) error {
		if tp == nil {
			return invalidOption("nil tracer provider")
		}
		o.tracerProvider = tp
		return nil
	}
}

// DurationBuckets are the bucket boundaries, in seconds, of the duration histograms of
// the client and its recipes: from half a millisecond (a request on a local network)
// to five minutes (a long wait for a lock). OpenTelemetry's default boundaries are
// meant for milliseconds.
var DurationBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300}

// Metering reports whether mp measures anything: not a no-op provider. Recipes skip
// their measurements altogether when it does not, so that they cost nothing.
func Metering(mp metric.MeterProvider) bool {
	_, off := mp.(metricnoop.MeterProvider)
	return mp != nil && !off
}

// Tracing reports whether tp records anything: not a no-op provider.
func Tracing(tp trace.TracerProvider) bool {
	_, off := tp.(tracenoop.TracerProvider)
	return tp != nil && !off
}

// The outcomes of a request, the values of its outcome attribute: a bounded set, so
// that a dashboard can group by it.
const (
	outcomeOK             = "ok"
	outcomeNoNode         = "no_node"
	outcomeNodeExists     = "node_exists"
	outcomeBadVersion     = "bad_version"
	outcomeNotEmpty       = "not_empty"
	outcomeNoAuth         = "no_auth"
	outcomeSessionExpired = "session_expired"
	outcomeConnectionLoss = "connection_loss"
	outcomeTimeout        = "timeout"
	outcomeCancelled      = "cancelled"
	outcomeClosed         = "closed"
	outcomeError          = "error"
)

var outcomes = []string{outcomeOK, outcomeNoNode, outcomeNodeExists, outcomeBadVersion, outcomeNotEmpty,
	outcomeNoAuth, outcomeSessionExpired, outcomeConnectionLoss, outcomeTimeout, outcomeCancelled, outcomeClosed, outcomeError}

// The operations of the client, the values of the operation attribute; opOther is a
// caller's own operation given to Retry.
const (
	opCreate    = "create"
	opDelete    = "delete"
	opGet       = "get"
	opGetW      = "getw"
	opExists    = "exists"
	opExistsW   = "existsw"
	opChildren  = "children"
	opChildrenW = "childrenw"
	opSet       = "set"
	opMulti     = "multi"
	opSync      = "sync"
	opOther     = "other"
	opGetACL    = "getacl"
	opSetACL    = "setacl"
	opDeleteAll = "deleteall"
	opReconfig  = "reconfig"
	opAddWatch  = "addwatch"
)

var operations = []string{opCreate, opDelete, opGet, opGetW, opExists, opExistsW, opChildren, opChildrenW, opSet, opMulti, opSync, opOther,
	opGetACL, opSetACL, opDeleteAll, opReconfig}

// Why a session was lost, the values of the reason attribute.
const (
	lostExpired = "expired" // the server said so
	lostTimeout = "timeout" // the client gave it up after a session timeout without a server
	lostRebuilt = "rebuilt" // the client gave it up: the ensemble lost the history it was made in
)

// outcome names how a request ended.
func outcome(err error) string {
	switch {
	case err == nil:
		return outcomeOK
	case errors.Is(err, context.Canceled):
		return outcomeCancelled
	case errors.Is(err, context.DeadlineExceeded):
		return outcomeTimeout
	case errors.Is(err, ErrClosed):
		return outcomeClosed
	case errors.Is(err, zk.ErrNoNode):
		return outcomeNoNode
	case errors.Is(err, zk.ErrNodeExists):
		return outcomeNodeExists
	case errors.Is(err, zk.ErrBadVersion):
		return outcomeBadVersion
	case errors.Is(err, zk.ErrNotEmpty):
		return outcomeNotEmpty
	case errors.Is(err, zk.ErrNoAuth):
		return outcomeNoAuth
	case errors.Is(err, zk.ErrSessionExpired):
		return outcomeSessionExpired
	case IsRetryable(err):
		return outcomeConnectionLoss
	}
	return outcomeError
}

// clientMetrics are the client's instruments; nil when nothing is measured, and then
// every method returns at once. The attribute sets are made once, here, so that a
// measurement allocates nothing of ours.
type clientMetrics struct {
	stateChanges metric.Int64Counter
	sessionsLost metric.Int64Counter
	requests     metric.Float64Histogram
	retries      metric.Int64Counter

	byState    map[ConnectionState][]metric.AddOption
	byReason   map[string][]metric.AddOption
	byRequest  map[[2]string][]metric.RecordOption // operation, outcome
	byRetryOp  map[string][]metric.AddOption
	lastErrors error // of making the instruments, for New to log
}

func newClientMetrics(mp metric.MeterProvider) *clientMetrics {
	if !Metering(mp) {
		return nil
	}
	meter := mp.Meter(Scope)
	m := &clientMetrics{
		byState:   map[ConnectionState][]metric.AddOption{},
		byReason:  map[string][]metric.AddOption{},
		byRequest: map[[2]string][]metric.RecordOption{},
		byRetryOp: map[string][]metric.AddOption{},
	}
	var errs [4]error
	m.stateChanges, errs[0] = meter.Int64Counter("zkrecipes.client.state_changes",
		metric.WithDescription("Connection states entered, by state (Connected, Suspended, Reconnected, Lost, ReadOnly, Rebuilt)."),
		metric.WithUnit("{change}"))
	m.sessionsLost, errs[1] = meter.Int64Counter("zkrecipes.client.sessions_lost",
		metric.WithDescription("Sessions lost, by reason: expired (by the server), timeout (given up by the client after a session timeout without a server) or rebuilt (given up by the client: the ensemble lost the history the session was made in)."),
		metric.WithUnit("{session}"))
	m.requests, errs[2] = meter.Float64Histogram("zkrecipes.client.request.duration",
		metric.WithDescription("Operations of the client, by operation and outcome, retries included: the count is the number of operations."),
		metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(DurationBuckets...))
	m.retries, errs[3] = meter.Int64Counter("zkrecipes.client.retries",
		metric.WithDescription("Retries of operations after a connection error, by operation."),
		metric.WithUnit("{retry}"))
	m.lastErrors = errors.Join(errs[:]...)
	for s := Connected; s <= Rebuilt; s++ {
		m.byState[s] = addOpts(attribute.String("state", s.String()))
	}
	for _, r := range []string{lostExpired, lostTimeout, lostRebuilt} {
		m.byReason[r] = addOpts(attribute.String("reason", r))
	}
	for _, op := range operations {
		m.byRetryOp[op] = addOpts(attribute.String("operation", op))
		for _, out := range outcomes {
			set := attribute.NewSet(attribute.String("operation", op), attribute.String("outcome", out))
			m.byRequest[[2]string{op, out}] = []metric.RecordOption{metric.WithAttributeSet(set)}
		}
	}
	return m
}

func addOpts(kv ...attribute.KeyValue) []metric.AddOption {
	return []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(kv...))}
}

func (m *clientMetrics) stateChanged(s ConnectionState) {
	if m == nil {
		return
	}
	m.stateChanges.Add(context.Background(), 1, m.byState[s]...)
}

func (m *clientMetrics) sessionLost(reason string) {
	if m == nil {
		return
	}
	m.sessionsLost.Add(context.Background(), 1, m.byReason[reason]...)
}

// start is when a request began, for request; zero when nothing is measured, so that
// the clock is not even read.
func (m *clientMetrics) start() time.Time {
	if m == nil {
		return time.Time{}
	}
	return time.Now()
}

func (m *clientMetrics) request(ctx context.Context, op string, start time.Time, err error) {
	if m == nil {
		return
	}
	m.requests.Record(ctx, time.Since(start).Seconds(), m.byRequest[[2]string{op, outcome(err)}]...)
}

func (m *clientMetrics) retry(ctx context.Context, op string) {
	if m == nil {
		return
	}
	m.retries.Add(ctx, 1, m.byRetryOp[op]...)
}
