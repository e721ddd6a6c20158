package barrier_test

import (
	"context"
	"fmt"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/barrier"
	"github.com/zkrecipes/zkrecipes/zktest"
)

func ExampleBarrier() {
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

	// Hold the workers back until the migration is done.
	gate, err := barrier.New(client, "/barriers/migration")
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := gate.Set(ctx); err != nil {
		fmt.Println(err)
		return
	}
	passed := make(chan error)
	go func() { passed <- gate.Wait(ctx) }() // a worker, usually in another process
	fmt.Println("migrating")
	if err := gate.Remove(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("worker passed:", <-passed == nil)
	// Output:
	// migrating
	// worker passed: true
}

func ExampleDouble() {
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

	// Two workers start a computation together and finish it together; each would
	// usually run in its own process.
	done := make(chan string)
	for _, name := range []string{"worker-1", "worker-2"} {
		go func() {
			d, err := barrier.NewDouble(client, "/barriers/batch", 2)
			if err == nil {
				err = d.Enter(ctx) // returns once both have entered
			}
			if err == nil {
				err = d.Leave(ctx) // returns once both have left
			}
			done <- fmt.Sprint(name, " finished: ", err == nil)
		}()
	}
	a, b := <-done, <-done
	fmt.Println(min(a, b))
	fmt.Println(max(a, b))
	// Output:
	// worker-1 finished: true
	// worker-2 finished: true
}
