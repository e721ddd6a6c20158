package group_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/group"
	"github.com/zkrecipes/zkrecipes/zktest"
)

func ExampleMember() {
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

	// Two replicas of a service join the group, each with its address as payload.
	for _, id := range []string{"replica-1", "replica-2"} {
		m, err := group.New(client, "/services/api", id, []byte(id+".internal:8080"))
		if err != nil {
			fmt.Println(err)
			return
		}
		if err := m.Start(ctx); err != nil {
			fmt.Println(err)
			return
		}
		defer m.Close(ctx)
	}

	// A third joins and reads who is there once it has seen them all.
	me, _ := group.New(client, "/services/api", "replica-3", []byte("replica-3.internal:8080"))
	if err := me.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer me.Close(ctx)
	members := me.Members()
	for _, id := range slices.Sorted(maps.Keys(members)) {
		fmt.Printf("%s at %s\n", id, members[id])
	}
	// Output:
	// replica-1 at replica-1.internal:8080
	// replica-2 at replica-2.internal:8080
	// replica-3 at replica-3.internal:8080
}

// A replica whose payload never changes promises so: the other members then need no
// watch on its node, and nobody can change its payload.
func ExampleFixedPayload() {
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

	m, err := group.New(client, "/services/api", "replica-1", []byte("replica-1.internal:8080"), group.FixedPayload())
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := m.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close(ctx)
	fmt.Println(string(m.Members()["replica-1"]))
	err = m.SetPayload(ctx, []byte("replica-1.internal:9090"))
	fmt.Println("SetPayload refused:", errors.Is(err, group.ErrFixedPayload))
	// Output:
	// replica-1.internal:8080
	// SetPayload refused: true
}
