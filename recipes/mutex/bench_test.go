package mutex

import (
	"context"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// BenchmarkContendedAcquisition is two participants, each on a client of its own,
// taking a lock in turn: each acquisition waits for the other's release. It reports
// the process's CPU per acquisition (cpu-ns/op: the clients', since the server is a
// process of its own) for go-zookeeper's bare zk.Lock (the floor), and for ours with
// the instrumentation off (no providers) under a context that cannot end and under
// one that can (off-deadline: every request then runs on a request goroutine, so
// that the caller can stop waiting), with metrics only, and on (the SDK, with a
// reader that is never collected and spans exported to nowhere). zk.Lock-32 and
// off-32 are the first two with 32 participants, where each listing names 32 nodes:
//
//	go test -run '^$' -bench ContendedAcquisition -benchtime 2000x -count 6 ./recipes/mutex/
//
// Add -cpuprofile to see where a contended acquisition's CPU goes (bench/analysis.md).
func BenchmarkContendedAcquisition(b *testing.B) {
	srv := zktest.NewServer(b)
	b.Run("zk.Lock", func(b *testing.B) { benchmarkContendedZKLock(b, srv, 2) })
	b.Run("off", func(b *testing.B) { benchmarkContended(b, srv, context.Background(), 2) })
	b.Run("zk.Lock-32", func(b *testing.B) { benchmarkContendedZKLock(b, srv, 32) })
	b.Run("off-32", func(b *testing.B) { benchmarkContended(b, srv, context.Background(), 32) })
	b.Run("off-deadline", func(b *testing.B) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		benchmarkContended(b, srv, ctx, 2)
	})
	b.Run("metrics", func(b *testing.B) {
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		defer func() { _ = mp.Shutdown(context.Background()) }()
		benchmarkContended(b, srv, context.Background(), 2, framework.WithMeterProvider(mp))
	})
	b.Run("on", func(b *testing.B) {
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewNoopExporter()))
		defer func() {
			_ = mp.Shutdown(context.Background())
			_ = tp.Shutdown(context.Background())
		}()
		benchmarkContended(b, srv, context.Background(), 2, framework.WithMeterProvider(mp), framework.WithTracerProvider(tp))
	})
}

func benchmarkContended(b *testing.B, srv *zktest.Server, ctx context.Context, sessions int, opts ...framework.Option) {
	mutexes := make([]locker, sessions)
	for i := range mutexes {
		c, err := framework.New([]string{srv.Addr()}, opts...)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		if err := c.WaitConnected(ctx); err != nil {
			b.Fatal(err)
		}
		if mutexes[i], err = New(c, "/bench/contended"); err != nil {
			b.Fatal(err)
		}
	}
	runContended(b, ctx, mutexes)
}

// benchmarkContendedZKLock is the same with go-zookeeper's bare zk.Lock, the floor
// our client CPU is measured against.
func benchmarkContendedZKLock(b *testing.B, srv *zktest.Server, sessions int) {
	mutexes := make([]locker, sessions)
	for i := range mutexes {
		conn, events, err := zk.Connect([]string{srv.Addr()}, 10*time.Second, zk.WithLogInfo(false))
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		for e := range events {
			if e.State == zk.StateHasSession {
				break
			}
		}
		if _, err := conn.Create("/bench", nil, 0, framework.WorldACL(framework.PermAll)); err != nil && err != framework.ErrNodeExists {
			b.Fatal(err)
		}
		mutexes[i] = zkLock{zk.NewLock(conn, "/bench/zklock", framework.WorldACL(framework.PermAll))}
	}
	runContended(b, context.Background(), mutexes)
}

// locker is what the benchmark takes and releases: a Mutex, or zk.Lock through zkLock.
type locker interface {
	Acquire(context.Context) error
	Release(context.Context) error
}

type zkLock struct{ l *zk.Lock }

func (z zkLock) Acquire(context.Context) error { return z.l.Lock() }
func (z zkLock) Release(context.Context) error { return z.l.Unlock() }

func runContended(b *testing.B, ctx context.Context, mutexes []locker) {
	b.ReportAllocs()
	b.ResetTimer()
	before := cpuTime()
	var wg sync.WaitGroup
	for i, m := range mutexes {
		n := b.N / len(mutexes)
		if i == 0 {
			n += b.N % len(mutexes)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n {
				if err := m.Acquire(ctx); err != nil {
					b.Error(err)
					return
				}
				if err := m.Release(ctx); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(cpuTime()-before)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
