package election_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/election"
	"github.com/zkrecipes/zkrecipes/zktest"
)

func ExampleLatch() {
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

	latch, err := election.NewLatch(client, "/election/report-builder", election.WithID("replica-1"))
	if err != nil {
		fmt.Println(err)
		return
	}
	latch.Listen(func(leads bool) { fmt.Println("leading:", leads) })
	if err := latch.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	awaitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := latch.Await(awaitCtx); err != nil {
		fmt.Println(err)
		return
	}
	leader, _ := latch.Leader(ctx)
	fmt.Println("leader:", leader.ID)
	_ = latch.Close(ctx)
	// Output:
	// leading: true
	// leader: replica-1
}

// Context gives the leader's work a context that ends with its term of leadership:
// when the leadership may be lost, or at Close.
func ExampleLatch_Context() {
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

	latch, err := election.NewLatch(client, "/election/report-builder")
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := latch.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	if err := latch.Await(ctx); err != nil {
		fmt.Println(err)
		return
	}
	term, stopTerm := latch.Context(ctx)
	defer stopTerm()
	fmt.Println("leading; term live:", term.Err() == nil) // run the leader's work under term
	_ = latch.Close(ctx)
	<-term.Done()
	fmt.Println("term over:", errors.Is(context.Cause(term), election.ErrNotLeader))
	// Output:
	// leading; term live: true
	// term over: true
}

func ExampleSelector() {
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

	polled := make(chan struct{})
	// lead runs only while this process leads; its ctx ends when leadership may be
	// lost, so the poller stops before anyone else can start.
	lead := func(ctx context.Context) error {
		fmt.Println("polling the scheduler")
		close(polled)
		<-ctx.Done()
		fmt.Println("stopped polling")
		return nil
	}
	poller, err := election.NewSelector(client, "/election/poller", lead, election.WithID("replica-1"))
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := poller.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	<-polled
	_ = poller.Close(ctx)
	// Output:
	// polling the scheduler
	// stopped polling
}
