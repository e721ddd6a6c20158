package cache_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/cache"
	"github.com/zkrecipes/zkrecipes/zktest"
)

func ExampleCache() {
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
	_, _ = client.Create(ctx, "/config/db/url", []byte("postgres://primary"), framework.CreatingParents())

	// Follow /config and everything below it.
	config, err := cache.New(client, "/config")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer config.Close(context.Background())
	changed := make(chan cache.Event, 10)
	config.Listen(func(ev cache.Event) {
		if ev.Type == cache.Changed {
			changed <- ev
		}
	})
	if err := config.Start(ctx); err != nil { // returns with the first complete copy
		fmt.Println(err)
		return
	}
	url, _ := config.Get("/config/db/url")
	fmt.Printf("%d nodes; url = %s\n", config.Len(), url.Data)

	// Another process moves the database; the copy follows.
	_, _ = client.Set(ctx, "/config/db/url", []byte("postgres://replica"), -1)
	ev := <-changed
	fmt.Printf("%s: %s -> %s (version %d)\n", ev.Path, ev.Old.Data, ev.New.Data, ev.New.Stat.Version)
	// Output:
	// 3 nodes; url = postgres://primary
	// /config/db/url: postgres://primary -> postgres://replica (version 1)
}

// A cache whose client closes says so, last: a follower built on it (a service
// provider, say) learns that its copy is final.
func ExampleStopped() {
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
	services, err := cache.New(client, "/services", cache.Depth(1))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer services.Close(context.Background())
	stopped := make(chan cache.Event, 1)
	services.Listen(func(ev cache.Event) {
		if ev.Type == cache.Stopped {
			stopped <- ev
		}
	})
	if err := services.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	_ = client.Close()
	ev := <-stopped
	fmt.Println(ev.Type, errors.Is(ev.Err, framework.ErrClosed))
	fmt.Println(services.Start(ctx)) // a second Start
	// Output:
	// Stopped true
	// cache: already started
}

// Releases published read-only are followed without a data watch each: only the
// parent's children are watched, and a release deleted and made again is still seen.
func ExampleTrustReadOnly() {
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
	readOnly := framework.WithNodePerms(framework.PermRead)
	_, _ = client.Create(ctx, "/releases/v1", []byte("sha 1a2b"), framework.CreatingParents(), readOnly)

	releases, err := cache.New(client, "/releases", cache.Depth(1), cache.TrustReadOnly())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer releases.Close(context.Background())
	events := make(chan cache.Event, 10)
	releases.Listen(func(ev cache.Event) {
		if ev.Path != "/releases" && (ev.Type == cache.Created || ev.Type == cache.Deleted) {
			events <- ev
		}
	})
	if err := releases.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	<-events // v1 loaded

	// v1 withdrawn and published again with other contents, in one transaction.
	_, _ = client.Multi(ctx, framework.DeleteOp("/releases/v1", -1),
		framework.CreateOp("/releases/v1", []byte("sha 3c4d"), readOnly))
	for range 2 {
		ev := <-events
		fmt.Println(ev.Type, ev.Path, string(ev.Old.Data)+string(ev.New.Data))
	}
	// Output:
	// Deleted /releases/v1 sha 1a2b
	// Created /releases/v1 sha 3c4d
}
