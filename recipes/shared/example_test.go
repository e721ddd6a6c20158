package shared_test

import (
	"context"
	"fmt"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/shared"
	"github.com/zkrecipes/zkrecipes/zktest"
)

func ExampleCount() {
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

	// Curator's SharedCount at the same path reads and sets the same number.
	workers, err := shared.NewCount(client, "/config/workers", 4)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer workers.Close(context.Background())
	changed := make(chan shared.Versioned[int32], 10)
	workers.Listen(func(v shared.Versioned[int32]) { changed <- v })
	if err := workers.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("workers:", workers.Get().Value)

	// Scale up, unless someone changed the count since we read it.
	ok, err := workers.TrySet(ctx, workers.Get(), 8)
	fmt.Println("scaled:", ok, err)
	for v := range changed {
		if v.Value == 8 {
			fmt.Println("heard:", v.Value, "at version", v.Version)
			break
		}
	}
	// Output:
	// workers: 4
	// scaled: true <nil>
	// heard: 8 at version 1
}

func ExampleValue() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
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

	mode, err := shared.NewValue(client, "/config/mode", []byte("normal"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer mode.Close(context.Background())
	if err := mode.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	if err := mode.Set(ctx, []byte("maintenance")); err != nil {
		fmt.Println(err)
		return
	}
	v := mode.Get()
	fmt.Printf("%s (version %d)\n", v.Value, v.Version)
	// Output:
	// maintenance (version 1)
}
