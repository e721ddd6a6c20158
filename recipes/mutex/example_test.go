package mutex_test

import (
	"context"
	"fmt"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/mutex"
	"github.com/zkrecipes/zkrecipes/zktest"
)

func ExampleMutex() {
	ctx := context.Background()
	srv, err := zktest.StartServer(ctx) // a throwaway ZooKeeper; use your ensemble's addresses
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	client, err := framework.New([]string{srv.Addr()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	lock, err := mutex.New(client, "/locks/nightly-report", mutex.WithID("worker-1"))
	if err != nil {
		fmt.Println(err)
		return
	}
	acquireCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := lock.Acquire(acquireCtx); err != nil {
		fmt.Println("not acquired:", err)
		return
	}
	// Work while the lock is held, and stop at once if it may have been lost.
	select {
	case <-lock.Lost():
		fmt.Println("lost the lock: stop writing")
	case <-time.After(10 * time.Millisecond): // the work
		fmt.Println("held; fencing token is positive:", lock.FencingToken() > 0)
	}
	if err := lock.Release(ctx); err != nil {
		fmt.Println(err)
	}
	fmt.Println("held after release:", lock.IsAcquired())
	// Output:
	// held; fencing token is positive: true
	// held after release: false
}

func ExampleRevoke() {
	ctx := context.Background()
	srv, err := zktest.StartServer(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	client, err := framework.New([]string{srv.Addr()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	asked := make(chan struct{})
	holder, _ := mutex.New(client, "/locks/db-migration", mutex.WithID("migrator"),
		mutex.WithRevocationListener(func() { close(asked) }))
	if err := holder.Acquire(ctx); err != nil {
		fmt.Println(err)
		return
	}

	// An operator asks whoever holds the lock to let go.
	participants, _ := holder.Participants(ctx)
	fmt.Println("holder:", participants[0].ID)
	if err := mutex.Revoke(ctx, client, participants[0].Node); err != nil {
		fmt.Println(err)
		return
	}
	<-asked
	fmt.Println("asked to release:", holder.Release(ctx) == nil)
	// Output:
	// holder: migrator
	// asked to release: true
}

func ExampleMutex_Do() {
	ctx := context.Background()
	srv, err := zktest.StartServer(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	client, err := framework.New([]string{srv.Addr()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	lock, err := mutex.New(client, "/locks/ledger")
	if err != nil {
		fmt.Println(err)
		return
	}
	// Acquire, run the work under a context that ends if the lock may be lost, and
	// release, even if the work panics.
	err = lock.Do(ctx, func(ctx context.Context) error {
		// Hand ctx to every call of the work, and the token to the store.
		fmt.Println("held; fencing token is positive:", lock.FencingToken() > 0)
		return ctx.Err()
	})
	fmt.Println("done:", err, "held after:", lock.IsAcquired())
	// Output:
	// held; fencing token is positive: true
	// done: <nil> held after: false
}
