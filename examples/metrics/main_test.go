package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/goleak"

	"github.com/zkrecipes/zkrecipes/framework"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The workload runs on a throwaway server; a Prometheus scrape of the endpoint then
// shows exactly what it did.
func TestScrapeShowsTheWorkload(t *testing.T) {
	t.Setenv("ZK_SERVERS", "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tel, err := newTelemetry(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tel.shutdown()
	servers, namespace, stop, err := zookeeper(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if err := workload(ctx, servers, append(tel.options(), framework.WithNamespace(namespace))); err != nil {
		t.Fatal(err)
	}

	srv := httptest.NewServer(tel.handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}

	for _, want := range []struct {
		family string
		labels map[string]string
		value  float64
	}{
		// workers × rounds turns, and the holder's.
		{"zkrecipes_lock_wait_duration_seconds", map[string]string{"recipe": "mutex", "outcome": "acquired"}, workers*rounds + 1},
		{"zkrecipes_lock_wait_duration_seconds", map[string]string{"recipe": "mutex", "outcome": "refused"}, 1},
		{"zkrecipes_lock_wait_duration_seconds", map[string]string{"recipe": "mutex", "outcome": "timed_out"}, 1},
		{"zkrecipes_lock_hold_duration_seconds", map[string]string{"recipe": "mutex"}, workers*rounds + 1},
		{"zkrecipes_lock_wait_duration_seconds", map[string]string{"recipe": "latch", "outcome": "acquired"}, 1},
		{"zkrecipes_election_leadership_changes_total", map[string]string{"recipe": "latch", "change": "gained"}, 1},
		{"zkrecipes_election_leadership_changes_total", map[string]string{"recipe": "latch", "change": "ended"}, 1},
		{"zkrecipes_lock_waiters", map[string]string{"recipe": "mutex"}, 0},
		{"zkrecipes_client_state_changes_total", map[string]string{"state": "Connected"}, workers},
	} {
		got, ok := value(families[want.family], want.labels)
		if !ok || got != want.value {
			t.Errorf("%s%v = %v (found: %v), want %v", want.family, want.labels, got, ok, want.value)
		}
	}
	// Every acquisition but the timed-out one, whose create may or may not have come
	// before its deadline, created a node.
	if creates, _ := value(families["zkrecipes_client_request_duration_seconds"], map[string]string{"operation": "create", "outcome": "ok"}); creates < workers*rounds+3 {
		t.Errorf("%v creates, want at least %v", creates, workers*rounds+3)
	}
	for _, absent := range []string{"zkrecipes_client_sessions_lost_total", "zkrecipes_lock_holds_lost_total"} {
		if families[absent] != nil {
			t.Errorf("%s reported, yet nothing was lost", absent)
		}
	}
}

// value is the value of the family's metric with the labels given (among others): a
// counter's or gauge's value, or a histogram's count.
func value(f *dto.MetricFamily, labels map[string]string) (float64, bool) {
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		found := 0
		for _, l := range m.GetLabel() {
			if v, ok := labels[l.GetName()]; ok {
				if v != l.GetValue() {
					continue next
				}
				found++
			}
		}
		if found != len(labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}
