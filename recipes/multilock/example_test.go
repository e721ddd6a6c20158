package multilock_test

import (
	"context"
	"fmt"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/multilock"
	"github.com/zkrecipes/zkrecipes/zktest"
)

func ExampleMultiLock() {
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

	// Move money between two accounts: both locked, or neither.
	both, err := multilock.NewMutexes(client, []string{"/locks/accounts/bob", "/locks/accounts/alice"})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := both.Acquire(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("both held:", both.IsAcquired())
	fmt.Println("released:", both.Release(ctx) == nil)
	// Output:
	// both held: true
	// released: true
}

// Do holds every lock while a function runs under a context that ends if any of them
// may be lost, and releases them after, even on a panic.
func ExampleMultiLock_Do() {
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

	both, err := multilock.NewMutexes(client, []string{"/locks/accounts/bob", "/locks/accounts/alice"})
	if err != nil {
		fmt.Println(err)
		return
	}
	err = both.Do(ctx, func(ctx context.Context) error {
		fmt.Println("both held:", both.IsAcquired(), "context live:", ctx.Err() == nil)
		return nil // move the money here, under ctx
	})
	fmt.Println("done:", err, "held:", both.IsAcquired())
	// Output:
	// both held: true context live: true
	// done: <nil> held: false
}
