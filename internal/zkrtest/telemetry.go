package zkrtest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/zkrecipes/zkrecipes/framework"
)

// Telemetry is OpenTelemetry's SDK keeping what it records in memory: metrics read
// with a ManualReader, spans with a SpanRecorder, so a test can check the figures of
// a scripted run exactly.
type Telemetry struct {
	reader *sdkmetric.ManualReader
	spans  *tracetest.SpanRecorder
	// Options give a client the meter and tracer providers.
	Options []framework.Option
}

// NewTelemetry makes the providers; they are shut down at the end of the test.
func NewTelemetry(t testing.TB) *Telemetry {
	tm := &Telemetry{reader: sdkmetric.NewManualReader(), spans: tracetest.NewSpanRecorder()}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(tm.reader))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tm.spans))
	t.Cleanup(func() {
		_ = mp.Shutdown(context.Background())
		_ = tp.Shutdown(context.Background())
	})
	tm.Options = []framework.Option{framework.WithMeterProvider(mp), framework.WithTracerProvider(tp)}
	return tm
}

// each calls fn with every data point recorded so far: its instrument's name, its
// attributes, and a counter's or up-down counter's value, or a histogram's count.
func (tm *Telemetry) each(t testing.TB, fn func(name string, set attribute.Set, value int64)) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, tm.reader.Collect(context.Background(), &rm))
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch data := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range data.DataPoints {
					fn(m.Name, p.Attributes, p.Value)
				}
			case metricdata.Histogram[float64]:
				for _, p := range data.DataPoints {
					fn(m.Name, p.Attributes, int64(p.Count))
				}
			default:
				t.Fatalf("instrument %s has data of type %T", m.Name, m.Data)
			}
		}
	}
}

// points reads the data points of the instrument name whose attributes include
// attrs (key, value, key, value...): a counter's or up-down counter's values, or a
// histogram's counts.
func (tm *Telemetry) points(t testing.TB, name string, attrs []string) []int64 {
	t.Helper()
	require.Zero(t, len(attrs)%2, "attributes come as key, value pairs")
	match := func(set attribute.Set) bool {
		for i := 0; i < len(attrs); i += 2 {
			if v, ok := set.Value(attribute.Key(attrs[i])); !ok || v.String() != attrs[i+1] {
				return false
			}
		}
		return true
	}
	var values []int64
	tm.each(t, func(n string, set attribute.Set, value int64) {
		if n == name && match(set) {
			values = append(values, value)
		}
	})
	return values
}

// boundedKeys are the metric attributes of the client and the recipes: each takes a
// few fixed values, never a path, a node or a session.
var boundedKeys = []string{"recipe", "outcome", "operation", "state", "reason", "change", "type"}

// RequireBoundedAttributes fails the test unless every data point recorded so far,
// of any instrument, has only attributes from boundedKeys.
func (tm *Telemetry) RequireBoundedAttributes(t testing.TB) {
	t.Helper()
	tm.each(t, func(name string, set attribute.Set, _ int64) {
		for _, kv := range set.ToSlice() {
			require.Contains(t, boundedKeys, string(kv.Key), "%s has attribute %s=%s", name, kv.Key, kv.Value.String())
		}
	})
}

// Sum is the total of counter name over the attribute sets that include attrs (key,
// value pairs); 0 when nothing was recorded.
func (tm *Telemetry) Sum(t testing.TB, name string, attrs ...string) int64 {
	t.Helper()
	var sum int64
	for _, v := range tm.points(t, name, attrs) {
		sum += v
	}
	return sum
}

// Count is how many values histogram name recorded with attribute sets that include
// attrs: the same sum, over the histogram's counts.
func (tm *Telemetry) Count(t testing.TB, name string, attrs ...string) int64 {
	t.Helper()
	return tm.Sum(t, name, attrs...)
}

// Spans are the spans ended so far, in the order they ended.
func (tm *Telemetry) Spans() []sdktrace.ReadOnlySpan { return tm.spans.Ended() }

// SpanAttributes are a span's attributes as strings by key.
func SpanAttributes(s sdktrace.ReadOnlySpan) map[string]string {
	m := map[string]string{}
	for _, kv := range s.Attributes() {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}
