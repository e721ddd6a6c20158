package mutex

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// heapProfiles, if set, is a directory where BenchmarkQueuedWaiterHeap writes heap
// profiles (every allocation sampled) just before the waiters start and once they all
// wait: `go tool pprof -sample_index=inuse_space -base <x>-base.pprof <x>-queued.pprof`
// is then what the queued waiters keep.
var heapProfiles = flag.String("waiterheap.profiles", "", "directory for BenchmarkQueuedWaiterHeap's heap profiles")

// BenchmarkQueuedWaiterHeap measures what a queued waiter keeps on the heap, as the
// bench's scale scenario does, for a Mutex and for go-zookeeper's zk.Lock side by
// side: 1,000 waiters on one session queue behind a holder on another; once the
// server holds a watch for each, the heap after a collection, less the heap before
// they started, divided by the waiters (heap-B/waiter). Goroutine stacks are not in
// it (runtime.MemStats.HeapAlloc leaves them out), as in the bench.
//
//	go test -run '^$' -bench QueuedWaiterHeap -benchtime 3x ./recipes/mutex/ [-waiterheap.profiles DIR]
func BenchmarkQueuedWaiterHeap(b *testing.B) {
	const waiters = 1000
	srv := zktest.NewServer(b)
	if *heapProfiles != "" {
		// Set before any waiter allocates, so that the profiles see every allocation.
		runtime.MemProfileRate = 1
	}
	b.Run("mutex", func(b *testing.B) {
		// A context that can end, as a caller's usually can: requests then run on the
		// client's request goroutines, as in the bench.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		holderClient := heapClient(b, srv)
		c := heapClient(b, srv)
		holder, err := New(holderClient, "/heap/mutex")
		if err != nil {
			b.Fatal(err)
		}
		ms := make([]*Mutex, waiters)
		for i := range ms {
			if ms[i], err = New(c, "/heap/mutex"); err != nil {
				b.Fatal(err)
			}
		}
		queueHeap(b, srv, "mutex", lockerFuncs{
			lock:   func() error { return holder.Acquire(ctx) },
			unlock: func() error { return holder.Release(ctx) },
		}, waiters, func(i int) lockerFuncs {
			return lockerFuncs{
				lock:   func() error { return ms[i].Acquire(ctx) },
				unlock: func() error { return ms[i].Release(ctx) },
			}
		})
	})
	b.Run("zk.Lock", func(b *testing.B) {
		acl := framework.WorldACL(framework.PermAll)
		holder := zk.NewLock(zkConn(b, srv), "/heap/zklock", acl)
		conn := zkConn(b, srv)
		ls := make([]*zk.Lock, waiters)
		for i := range ls {
			ls[i] = zk.NewLock(conn, "/heap/zklock", acl)
		}
		queueHeap(b, srv, "zklock", lockerFuncs{lock: holder.Lock, unlock: holder.Unlock}, waiters, func(i int) lockerFuncs {
			return lockerFuncs{lock: ls[i].Lock, unlock: ls[i].Unlock}
		})
	})
}

type lockerFuncs struct{ lock, unlock func() error }

// queueHeap runs b.N rounds of: the holder locks, the waiters queue behind it, the
// heap is read once the server holds a watch of each, the holder unlocks and every
// waiter locks and unlocks in turn.
func queueHeap(b *testing.B, srv *zktest.Server, name string, holder lockerFuncs, waiters int, waiter func(int) lockerFuncs) {
	ctx := testCtx(b)
	var perWaiter float64
	for i := range b.N {
		if err := holder.lock(); err != nil {
			b.Fatal(err)
		}
		_, before := watchesBy(b, ctx, srv)
		ls := make([]lockerFuncs, waiters)
		for i := range ls {
			ls[i] = waiter(i)
		}
		base := heapNow(b, name, i, "base")
		errs := make(chan error, waiters)
		var wg sync.WaitGroup
		for _, l := range ls {
			wg.Go(func() {
				if err := l.lock(); err != nil {
					errs <- err
					return
				}
				if err := l.unlock(); err != nil {
					errs <- err
				}
			})
		}
		// Queued: the server holds a watch of each waiter (each one's last request).
		poll := time.NewTicker(10 * time.Millisecond)
		deadline := time.After(wait)
		for _, total := watchesBy(b, ctx, srv); total < before+waiters; _, total = watchesBy(b, ctx, srv) {
			select {
			case <-poll.C:
			case <-deadline:
				b.Fatalf("only %d of %d waiters watch after %v", total-before, waiters, wait)
			}
		}
		poll.Stop()
		queued := heapNow(b, name, i, "queued")
		round := (float64(queued) - float64(base)) / float64(waiters)
		b.Logf("round %d: %.0f B/waiter", i, round)
		perWaiter += round
		if err := holder.unlock(); err != nil {
			b.Fatal(err)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
	}
	b.ReportMetric(perWaiter/float64(b.N), "heap-B/waiter")
}

// heapNow is the live heap after a collection, and writes its profile if asked.
func heapNow(b *testing.B, name string, round int, when string) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if *heapProfiles != "" {
		// A heap profile is that of the last collection but one's allocations; a
		// second collection brings it up to the first's.
		runtime.GC()
		f, err := os.Create(filepath.Join(*heapProfiles, fmt.Sprintf("%s-%d-%s.pprof", name, round, when)))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := pprof.WriteHeapProfile(f); err != nil {
			b.Fatal(err)
		}
		g, err := os.Create(filepath.Join(*heapProfiles, fmt.Sprintf("%s-%d-%s.goroutines", name, round, when)))
		if err != nil {
			b.Fatal(err)
		}
		defer g.Close()
		if err := pprof.Lookup("goroutine").WriteTo(g, 1); err != nil {
			b.Fatal(err)
		}
	}
	return ms.HeapAlloc
}

func heapClient(b *testing.B, srv *zktest.Server) *framework.Client {
	// Only a session's end loses a hold: a profiled run on a busy machine can be slow
	// enough to drop a connection, which says nothing of the heap.
	c, err := framework.New([]string{srv.Addr()}, framework.WithSessionTimeout(time.Minute),
		framework.WithErrorPolicy(framework.SessionErrorPolicy))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	if err := c.WaitConnected(context.Background()); err != nil {
		b.Fatal(err)
	}
	return c
}

func zkConn(b *testing.B, srv *zktest.Server) *zk.Conn {
	conn, events, err := zk.Connect([]string{srv.Addr()}, time.Minute, zk.WithLogInfo(false))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(conn.Close)
	for ev := range events {
		if ev.State == zk.StateHasSession {
			break
		}
	}
	go func() {
		for range events { // go-zookeeper drops what nobody reads; drain until Close
		}
	}()
	return conn
}
