package framework_test

import (
	"context"
	"fmt"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/zktest"
)

func ExampleClient_Config() {
	ctx := context.Background()
	// A one-member ensemble with dynamic configuration; use your ensemble's addresses.
	e, err := zktest.StartEnsemble(ctx, 1, zktest.WithDynamicConfig())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close()

	// Given one member, the client follows the ensemble's configuration from then on.
	client, err := framework.New([]string{e.Addr(0)}, framework.WithEnsembleTracking(true))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cfg, err := client.Config(waitCtx)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range cfg.Members {
		fmt.Printf("server %d: %s, clients at its own address: %v\n", m.ID, m.Role, m.Client == e.Addr(0))
	}
	// Output: server 1: participant, clients at its own address: true
}

func ExampleClient_Namespaced() {
	ctx := context.Background()
	srv, err := zktest.StartServer(ctx) // a throwaway ZooKeeper; use your ensemble's addresses
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	client, err := framework.New([]string{srv.Addr()}, framework.WithNamespace("app"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()

	// Another namespace on the same session; closing it leaves the session alone.
	jobs := client.Namespaced("jobs")
	defer jobs.Close()
	for _, data := range []string{"v1", "v2"} { // create, then overwrite
		if _, err := jobs.Create(waitCtx, "/settings", []byte(data), framework.OrSetData()); err != nil {
			fmt.Println(err)
			return
		}
	}
	data, _, err := jobs.Get(waitCtx, "/settings")
	fmt.Println(string(data), err)

	if _, err := client.Create(waitCtx, "/tmp/a/b", nil, framework.CreatingParents()); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(client.DeleteAll(waitCtx, "/tmp"))
	ok, _, err := client.Exists(waitCtx, "/tmp")
	fmt.Println(ok, err)
	// Output:
	// v2 <nil>
	// <nil>
	// false <nil>
}
