package nodes_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/nodes"
	"github.com/zkrecipes/zkrecipes/zktest"
)

func ExamplePersistentNode() {
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

	// Announce this replica for as long as it runs, through disconnections and
	// session losses.
	node, err := nodes.New(client, "/services/api/replica-1", []byte("10.0.0.7:8080"))
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := node.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("announced at", node.Path())
	if err := node.SetData(ctx, []byte("10.0.0.7:8081")); err != nil {
		fmt.Println(err)
		return
	}
	data, _, _ := client.Get(ctx, node.Path())
	fmt.Println("now", string(data))
	_ = node.Close(ctx)
	ok, _, _ := client.Exists(ctx, "/services/api/replica-1")
	fmt.Println("still there after Close:", ok)
	// Output:
	// announced at /services/api/replica-1
	// now 10.0.0.7:8081
	// still there after Close: false
}

// Listen tells when the node is made, found gone and made again, and when its client
// closed: here a persistent node that someone deletes.
func ExamplePersistentNode_Listen() {
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

	flag, err := nodes.New(client, "/config/feature-x", []byte("on"), nodes.Persistent())
	if err != nil {
		fmt.Println(err)
		return
	}
	events := make(chan nodes.Event, 10)
	flag.Listen(func(ev nodes.Event) { events <- ev })
	if err := flag.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer flag.Close(ctx)
	show := func(ev nodes.Event) { fmt.Println(ev.Path, ev.Present, errors.Is(ev.Err, framework.ErrClosed)) }
	show(<-events)
	if err := client.Delete(ctx, "/config/feature-x", -1); err != nil {
		fmt.Println(err)
		return
	}
	show(<-events)
	show(<-events)
	// A closed client ends the keeping: the last event says so.
	_ = client.Close()
	show(<-events)
	// Output:
	// /config/feature-x true false
	// /config/feature-x false false
	// /config/feature-x true false
	// /config/feature-x false true
}

// A node whose data its readers may trust never to change: nobody can set it, and
// SetData says so before sending anything.
func ExampleReadOnly() {
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

	node, err := nodes.New(client, "/services/api/replica-1", []byte("10.0.0.7:8080"), nodes.ReadOnly())
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := node.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer node.Close(ctx)
	err = node.SetData(ctx, []byte("10.0.0.7:8081"))
	fmt.Println("SetData refused:", errors.Is(err, nodes.ErrReadOnly))
	_, err = client.Set(ctx, node.Path(), []byte("10.0.0.7:8081"), -1)
	fmt.Println("the server refuses a set:", errors.Is(err, framework.ErrNoAuth))
	// Output:
	// SetData refused: true
	// the server refuses a set: true
}
