package semaphore_test

import (
	"context"
	"errors"
	"fmt"
	"path"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/semaphore"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// connect starts a throwaway ZooKeeper and a client of it; use your ensemble's
// addresses instead. stop closes both.
func connect(ctx context.Context) (c *framework.Client, stop func(), err error) {
	srv, err := zktest.StartServer(ctx)
	if err != nil {
		return nil, nil, err
	}
	c, err = framework.New([]string{srv.Addr()})
	if err != nil {
		srv.Close()
		return nil, nil, err
	}
	stop = func() { c.Close(); srv.Close() }
	if err := c.WaitConnected(ctx); err != nil {
		stop()
		return nil, nil, err
	}
	return c, stop, nil
}

// Two encoders may run at once across every process that shares the path.
func ExampleSemaphore() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client, stop, err := connect(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()

	encoders, err := semaphore.New(client, "/jobs/encoders", 2, semaphore.WithID("worker-1"))
	if err != nil {
		fmt.Println(err)
		return
	}
	leases, err := encoders.Acquire(ctx, 2) // both slots, or none
	fmt.Println(len(leases), "leases", err)

	_, err = encoders.TryAcquire(ctx, 1)
	fmt.Println("a third:", errors.Is(err, semaphore.ErrNoLeases))

	holders, _ := encoders.Participants(ctx)
	for _, p := range holders {
		fmt.Println(p.ID, "holds:", p.Holder)
	}
	for _, l := range leases {
		_ = l.Release(ctx)
	}
	// Output:
	// 2 leases <nil>
	// a third: true
	// worker-1 holds: true
	// worker-1 holds: true
}

// Do takes the leases, runs the work under a context that ends if any of them may be
// lost, and gives them back after, even on a panic.
func ExampleSemaphore_Do() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client, stop, err := connect(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()

	encoders, err := semaphore.New(client, "/jobs/encoders", 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	err = encoders.Do(ctx, 2, func(ctx context.Context, leases []*semaphore.Lease) error {
		fmt.Println(len(leases), "leases; context live:", ctx.Err() == nil)
		return nil
	})
	fmt.Println("done:", err)
	left, _ := encoders.Participants(ctx)
	fmt.Println("leases left:", len(left))
	// Output:
	// 2 leases; context live: true
	// done: <nil>
	// leases left: 0
}

// A lease is only as good as its session: work under its Context, which ends when
// Lost closes, and pass the fencing token to whatever the lease protects.
func ExampleLease() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client, stop, err := connect(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()

	sem, err := semaphore.New(client, "/db/writers", 3)
	if err != nil {
		fmt.Println(err)
		return
	}
	leases, err := sem.Acquire(ctx, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	lease := leases[0]
	fmt.Println("node under", path.Dir(lease.Node()))

	work, stopWork := lease.Context(ctx) // ends if the lease may be lost, and on its release
	defer stopWork()
	select {
	case <-work.Done():
		fmt.Println("lost: stop writing")
	default:
		fmt.Println("writing with fencing token > 0:", lease.FencingToken() > 0)
	}

	fmt.Println("release:", lease.Release(ctx))
	<-work.Done() // ended by the release
	fmt.Println("again:", errors.Is(lease.Release(ctx), semaphore.ErrNotHeld))
	// Output:
	// node under /db/writers/leases
	// writing with fencing token > 0: true
	// release: <nil>
	// again: true
}

// Unlike mutex.Mutex, a semaphore.Mutex is not reentrant, and any goroutine may
// release it.
func ExampleMutex() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client, stop, err := connect(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()

	lock, err := semaphore.NewMutex(client, "/reports/nightly")
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := lock.Acquire(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("held:", lock.IsAcquired())

	// Acquiring it again waits like any other participant: here until the deadline.
	short, cancelShort := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancelShort()
	fmt.Println("again:", errors.Is(lock.Acquire(short), context.DeadlineExceeded))

	done := make(chan error)
	go func() { done <- lock.Release(ctx) }() // another goroutine finishes the job
	fmt.Println("released:", <-done, "held:", lock.IsAcquired())
	// Output:
	// held: true
	// again: true
	// released: <nil> held: false
}
