package rwlock_test

import (
	"context"
	"fmt"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/rwlock"
	"github.com/zkrecipes/zkrecipes/zktest"
)

func ExampleRWLock() {
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

	config, err := rwlock.New(client, "/locks/config", rwlock.WithID("deployer"))
	if err != nil {
		fmt.Println(err)
		return
	}
	// Rewrite the configuration alone, then keep reading it while others may read too.
	if err := config.WriteLock().Acquire(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("writing")
	if err := config.ReadLock().Acquire(ctx); err != nil { // a downgrade: granted at once
		fmt.Println(err)
		return
	}
	_ = config.WriteLock().Release(ctx)
	fmt.Println("reading; still writing:", config.WriteLock().IsAcquired())
	fmt.Println("upgrade refused:", config.WriteLock().Acquire(ctx) == rwlock.ErrUpgrade)
	_ = config.ReadLock().Release(ctx)
	// Output:
	// writing
	// reading; still writing: false
	// upgrade refused: true
}

func ExampleLock() {
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

	a, _ := rwlock.New(client, "/locks/catalog", rwlock.WithID("reader-a"))
	b, _ := rwlock.New(client, "/locks/catalog", rwlock.WithID("reader-b"))
	_ = a.ReadLock().Acquire(ctx)
	_ = b.ReadLock().Acquire(ctx)
	readers, _ := a.ReadLock().Participants(ctx)
	for _, p := range readers {
		fmt.Println(p.ID, "holds:", p.Holder)
	}
	w, _ := rwlock.New(client, "/locks/catalog", rwlock.WithID("writer"))
	ok, _ := w.WriteLock().TryAcquire(ctx) // a writer must wait for both readers
	fmt.Println("write while read:", ok)
	_ = a.ReadLock().Release(ctx)
	_ = b.ReadLock().Release(ctx)
	// Unordered output:
	// reader-a holds: true
	// reader-b holds: true
	// write while read: false
}

// Do holds one side of the lock while a function runs under a context that ends if
// the lock may be lost, and releases it after, even on a panic.
func ExampleLock_Do() {
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

	config, err := rwlock.New(client, "/locks/config")
	if err != nil {
		fmt.Println(err)
		return
	}
	read := config.ReadLock()
	err = read.Do(ctx, func(ctx context.Context) error {
		fmt.Println("reading; held:", read.IsAcquired(), "context live:", ctx.Err() == nil)
		return nil
	})
	fmt.Println("done:", err, "held:", read.IsAcquired())
	// Output:
	// reading; held: true context live: true
	// done: <nil> held: false
}
