package counter_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/counter"
	"github.com/zkrecipes/zkrecipes/zktest"
)

func ExampleCounter() {
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

	// Curator's DistributedAtomicLong at the same path reads and adds to the same number.
	jobs, err := counter.New(client, "/counters/jobs", counter.PromotedToLock("/locks/counters/jobs"))
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 3 {
		r, err := jobs.Add(ctx, 1)
		switch {
		case errors.Is(err, counter.ErrUnknownOutcome):
			// The connection dropped with the write in flight: it may have counted.
			// Adding again could count twice; decide by what the count is for.
			fmt.Println("may or may not have counted:", err)
		case err != nil:
			fmt.Println(err)
		default:
			fmt.Printf("job number %d\n", r.Post)
		}
	}
	swapped, _ := jobs.CompareAndSet(ctx, 3, 100)
	n, _ := jobs.Get(ctx)
	fmt.Println("reset to 100:", swapped, n)
	// Output:
	// job number 1
	// job number 2
	// job number 3
	// reset to 100: true 100
}
