package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/cache"
	"github.com/zkrecipes/zkrecipes/recipes/counter"
	"github.com/zkrecipes/zkrecipes/recipes/group"
	"github.com/zkrecipes/zkrecipes/recipes/mutex"
	"github.com/zkrecipes/zkrecipes/recipes/partition"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// The operator's kit names only metrics the library exports: every metric in the
// Grafana dashboard's queries and in the Prometheus rules is in a scrape of this
// example after a workload that makes every instrument they use report (the
// example's own, plus a group, a partitioner, a counter, and a session expired
// under a held lock and a cache).
func TestOperatorKitNamesExportedMetrics(t *testing.T) {
	t.Setenv("ZK_SERVERS", "")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
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
	opts := append(tel.options(), framework.WithNamespace(namespace))
	if err := workload(ctx, servers, opts); err != nil {
		t.Fatal(err)
	}
	stateWorkload(ctx, t, servers, opts)
	expireWorkload(ctx, t, servers[0], opts)
	families := scrapeFamilies(t, tel.handler())

	used := map[string][]string{} // metric -> the files that name it
	for _, file := range []string{"../../deploy/grafana/zkrecipes.json", "../../deploy/prometheus/zkrecipes-rules.yml"} {
		for _, m := range metricsIn(t, file) {
			used[m] = append(used[m], file)
		}
	}
	if len(used) < 10 {
		t.Fatalf("only %d metrics found in the kit: %v", len(used), used)
	}
	for m, files := range used {
		if !exported(families, m) {
			t.Errorf("%s, named in %v, is not in the scrape", m, files)
		}
	}
	t.Logf("%d metrics named by the dashboard and the rules, all exported", len(used))
}

var metricName = regexp.MustCompile(`\bzkrecipes_[a-z0-9_]+`)

// metricsIn lists the metrics a kit file names: in a dashboard, those of its
// queries (every "expr"); in a rules file, every name (recorded series have
// colons, zkrecipes:..., and are not metrics).
func metricsIn(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	if strings.HasSuffix(file, ".json") {
		var dash any
		if err := json.Unmarshal(data, &dash); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		text = strings.Join(exprs(dash), "\n")
		if text == "" {
			t.Fatalf("%s: no queries", file)
		}
	}
	names := metricName.FindAllString(text, -1)
	slices.Sort(names)
	return slices.Compact(names)
}

// exprs finds every "expr" in a decoded dashboard.
func exprs(v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && k == "expr" {
				out = append(out, s)
			} else {
				out = append(out, exprs(x)...)
			}
		}
	case []any:
		for _, x := range v {
			out = append(out, exprs(x)...)
		}
	}
	return out
}

// exported tells whether the scrape has the metric: a family of its name, or a
// histogram's series (_bucket, _count, _sum).
func exported(families map[string]*dto.MetricFamily, name string) bool {
	if families[name] != nil {
		return true
	}
	for _, suffix := range []string{"_bucket", "_count", "_sum"} {
		if f := families[strings.TrimSuffix(name, suffix)]; strings.HasSuffix(name, suffix) && f != nil && f.GetType() == dto.MetricType_HISTOGRAM {
			return true
		}
	}
	return false
}

func scrapeFamilies(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(h)
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
	return families
}

// stateWorkload runs a group member, a partitioner that takes its three items,
// and a counter's add.
func stateWorkload(ctx context.Context, t *testing.T, servers []string, opts []framework.Option) {
	t.Helper()
	c := connect(ctx, t, servers, opts)
	m, err := group.New(c, "/workers", "w1", []byte("up"))
	must(t, err)
	must(t, m.Start(ctx))
	p, err := partition.New(c, "/jobs/partition", func(ctx context.Context, _ partition.Item) error {
		<-ctx.Done()
		return nil
	}, partition.Items("a", "b", "c"))
	must(t, err)
	must(t, p.Start(ctx))
	waitFor(ctx, t, "the partitioner to own its items", func() bool { return len(p.Owned()) == 3 })
	n, err := counter.New(c, "/jobs/next-id")
	must(t, err)
	_, err = n.Add(ctx, 1)
	must(t, err)
	must(t, p.Close(ctx))
	must(t, m.Close(ctx))
}

// expireWorkload expires the session of a client that holds a lock and follows
// a cache, and waits for the lock to be lost and the cache rebuilt.
func expireWorkload(ctx context.Context, t *testing.T, server string, opts []framework.Option) {
	t.Helper()
	const sessionTimeout = 2 * time.Second
	proxy := zktest.NewProxy(t, server)
	c := connect(ctx, t, []string{proxy.Addr()}, append(opts, framework.WithSessionTimeout(sessionTimeout)))
	ca, err := cache.New(c, "/jobs")
	must(t, err)
	defer ca.Close(context.Background())
	rebuilt := make(chan struct{})
	lost := false
	ca.Listen(func(ev cache.Event) { // one call at a time
		switch {
		case ev.Type == cache.Lost:
			lost = true
		case ev.Type == cache.Synced && lost:
			close(rebuilt)
			lost = false
		}
	})
	must(t, ca.Start(ctx))
	m, err := mutex.New(c, "/jobs/lock")
	must(t, err)
	must(t, m.Acquire(ctx))
	must(t, proxy.ExpireSession(ctx, sessionTimeout))
	for _, w := range []struct {
		what string
		done <-chan struct{}
	}{{"the lock lost", m.Lost()}, {"the cache rebuilt", rebuilt}} {
		select {
		case <-w.done:
		case <-ctx.Done():
			t.Fatalf("gave up waiting for %s", w.what)
		}
	}
	_ = m.Release(ctx) // lost: ErrLost
}

func connect(ctx context.Context, t *testing.T, servers []string, opts []framework.Option) *framework.Client {
	t.Helper()
	c, err := framework.New(servers, opts...)
	must(t, err)
	t.Cleanup(func() { _ = c.Close() })
	must(t, c.WaitConnected(ctx))
	return c
}

func waitFor(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("gave up waiting for %s", what)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
