package cache

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/zktest"
)

var loadedHeapProfile = flag.String("cache.loadedheap", "",
	"BenchmarkLoad writes a heap profile to this file while a cache holds the whole tree")

// BenchmarkLoad is the initial load of the benchmark driver's cache-load tree (10 +
// 100 + 9,900 nodes of 64 bytes under a root), one fresh client and cache per
// iteration. It reports the live heap per cached node once loaded (bytes/node: after
// a collection, less the heap of the connected client before the cache, as the bench
// driver measures it; go-zookeeper's registrations of the watches count too):
//
//	go test -run '^$' -bench Load -benchtime 5x -cpuprofile cpu.out ./recipes/cache/ -cache.loadedheap heap.out
func BenchmarkLoad(b *testing.B) {
	srv := zktest.NewServer(b)
	ctx := context.Background()
	writer := newClient(b, []string{srv.Addr()})
	if err := makeTree(ctx, writer, "/tree", []int{10, 10, 99}); err != nil {
		b.Fatal(err)
	}
	var load time.Duration
	var perNode float64
	for b.Loop() {
		b.StopTimer()
		c, err := framework.New([]string{srv.Addr()})
		if err != nil {
			b.Fatal(err)
		}
		if err := c.WaitConnected(ctx); err != nil {
			b.Fatal(err)
		}
		before := liveHeap()
		ca, err := New(c, "/tree")
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		if err := ca.Start(ctx); err != nil {
			b.Fatal(err)
		}
		load += time.Since(start)
		b.StopTimer()
		perNode += float64(liveHeap()-before) / float64(ca.Len())
		if *loadedHeapProfile != "" { // each iteration's overwrites the last one's
			writeHeapProfile(b, *loadedHeapProfile)
		}
		_ = ca.Close(context.Background())
		_ = c.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(load.Milliseconds())/float64(b.N), "ms/load")
	b.ReportMetric(perNode/float64(b.N), "bytes/node")
}

func liveHeap() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

func writeHeapProfile(b *testing.B, name string) {
	f, err := os.Create(name)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	runtime.GC()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
}

// makeTree makes root and, below it, fanout[0] children n0.., each with fanout[1]
// children and so on, each holding 64 bytes, a few hundred creates a transaction.
func makeTree(ctx context.Context, c *framework.Client, root string, fanout []int) error {
	data := make([]byte, 64)
	if _, err := c.Create(ctx, root, data); err != nil {
		return err
	}
	level := []string{root}
	for _, f := range fanout {
		var next []string
		var ops []framework.Op
		for _, parent := range level {
			for i := range f {
				p := join(parent, fmt.Sprintf("n%d", i))
				ops = append(ops, framework.CreateOp(p, data))
				next = append(next, p)
			}
		}
		for len(ops) > 0 {
			n := min(len(ops), 500)
			if _, err := c.Multi(ctx, ops[:n]...); err != nil {
				return err
			}
			ops = ops[n:]
		}
		level = next
	}
	return nil
}
