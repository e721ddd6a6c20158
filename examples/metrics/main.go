// Command metrics shows zkrecipes' metrics and traces end to end: it runs a small
// workload (workers taking a lock in turn, a TryAcquire refused, an Acquire timed out,
// a leader elected) and serves the figures in Prometheus format through
// OpenTelemetry's Prometheus exporter at http://127.0.0.1:9464/metrics.
//
//	go run . [-addr host:port] [-once] [-traces]
//
// -once prints one scrape after the workload and exits, instead of serving; -traces
// prints every acquisition's span as JSON on stderr. Without configuration it starts
// a throwaway ZooKeeper; with ZK_SERVERS set (host:port,host:port) it uses that
// ensemble, under a fresh namespace.
//
// It is a module of its own so that the SDK and the exporter stay out of the
// library's go.mod: the library needs only OpenTelemetry's API.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/election"
	"github.com/zkrecipes/zkrecipes/recipes/mutex"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// The workload: workers clients take the lock rounds times each.
const (
	workers = 3
	rounds  = 5
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9464", "where to serve /metrics")
	once := flag.Bool("once", false, "print one scrape after the workload and exit, instead of serving")
	traces := flag.Bool("traces", false, "print every acquisition's span as JSON on stderr")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *addr, *once, *traces); err != nil {
		fmt.Fprintln(os.Stderr, "metrics:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, addr string, once, traces bool) error {
	var spans io.Writer
	if traces {
		spans = os.Stderr
	}
	tel, err := newTelemetry(spans)
	if err != nil {
		return err
	}
	defer tel.shutdown()
	servers, namespace, stopZK, err := zookeeper(ctx)
	if err != nil {
		return err
	}
	defer stopZK()
	work, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := workload(work, servers, append(tel.options(), framework.WithNamespace(namespace))); err != nil {
		return err
	}
	if once {
		return scrape(tel.handler(), os.Stdout)
	}
	fmt.Printf("serving the metrics at http://%s/metrics; ^C to stop\n", addr)
	srv := &http.Server{Addr: addr, Handler: tel.handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// telemetry is OpenTelemetry's SDK: metrics read by the Prometheus exporter into a
// registry of their own, spans written as JSON (or dropped).
type telemetry struct {
	registry *prometheus.Registry
	mp       *sdkmetric.MeterProvider
	tp       *sdktrace.TracerProvider
}

func newTelemetry(spans io.Writer) (*telemetry, error) {
	t := &telemetry{registry: prometheus.NewRegistry()}
	exporter, err := otelprom.New(otelprom.WithRegisterer(t.registry))
	if err != nil {
		return nil, err
	}
	t.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	var tpOpts []sdktrace.TracerProviderOption
	if spans != nil {
		out, err := stdouttrace.New(stdouttrace.WithWriter(spans), stdouttrace.WithPrettyPrint())
		if err != nil {
			return nil, err
		}
		tpOpts = append(tpOpts, sdktrace.WithSyncer(out))
	}
	t.tp = sdktrace.NewTracerProvider(tpOpts...)
	return t, nil
}

// options give a client the providers: every recipe on it reports through them.
func (t *telemetry) options() []framework.Option {
	return []framework.Option{framework.WithMeterProvider(t.mp), framework.WithTracerProvider(t.tp)}
}

func (t *telemetry) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(t.registry, promhttp.HandlerOpts{}))
	return mux
}

func (t *telemetry) shutdown() {
	_ = t.mp.Shutdown(context.Background())
	_ = t.tp.Shutdown(context.Background())
}

// scrape writes what a Prometheus server would read from h, the zkrecipes lines.
func scrape(h http.Handler, w io.Writer) error {
	req, err := http.NewRequest(http.MethodGet, "/metrics", nil)
	if err != nil {
		return err
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	for line := range strings.Lines(rec.Body.String()) {
		if strings.Contains(line, "zkrecipes_") {
			if _, err := io.WriteString(w, line); err != nil {
				return err
			}
		}
	}
	return nil
}

// workload takes a lock from workers clients in turn, has one TryAcquire refused and
// one Acquire time out while the lock is held, and elects a leader that then leaves.
func workload(ctx context.Context, servers []string, opts []framework.Option) error {
	clients := make([]*framework.Client, workers)
	for i := range clients {
		c, err := framework.New(servers, opts...)
		if err != nil {
			return err
		}
		defer c.Close()
		if err := c.WaitConnected(ctx); err != nil {
			return err
		}
		clients[i] = c
	}

	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for _, c := range clients {
		m, err := mutex.New(c, "/jobs/lock")
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				if err := m.Acquire(ctx); err != nil {
					errs <- err
					return
				}
				if err := m.Release(ctx); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}

	holder, err := mutex.New(clients[0], "/jobs/lock")
	if err != nil {
		return err
	}
	other, err := mutex.New(clients[1], "/jobs/lock")
	if err != nil {
		return err
	}
	if err := holder.Acquire(ctx); err != nil {
		return err
	}
	if ok, err := other.TryAcquire(ctx); ok || err != nil {
		return fmt.Errorf("TryAcquire of a held lock: %v, %v", ok, err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if err := other.Acquire(short); !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("acquiring a held lock: %v", err)
	}
	if err := holder.Release(ctx); err != nil {
		return err
	}

	latch, err := election.NewLatch(clients[2], "/jobs/leader")
	if err != nil {
		return err
	}
	if err := latch.Start(ctx); err != nil {
		return err
	}
	if err := latch.Await(ctx); err != nil {
		return err
	}
	return latch.Close(ctx)
}

func zookeeper(ctx context.Context) (servers []string, namespace string, stop func(), err error) {
	namespace = "zkrecipes-metrics-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if env := os.Getenv("ZK_SERVERS"); env != "" {
		return strings.Split(env, ","), namespace, func() {}, nil
	}
	srv, err := zktest.StartServer(ctx)
	if err != nil {
		return nil, "", nil, err
	}
	return []string{srv.Addr()}, namespace, func() { _ = srv.Close() }, nil
}
