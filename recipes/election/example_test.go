package election_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
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
	// lost, so the poller stops before anyone else can start, and context.Cause says
	// why it ended.
	lead := func(ctx context.Context, term election.Term) error {
		fmt.Println(term.ID, "polls the scheduler")
		close(polled)
		<-ctx.Done()
		fmt.Println("stopped polling:", context.Cause(ctx))
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
	// replica-1 polls the scheduler
	// stopped polling: election: closed: /election/poller
}

// A Term's fencing token goes with everything the leader writes, so that what it
// writes to can refuse a deposed leader's late writes: here the token is stamped
// into the node the leader publishes.
func ExampleTerm() {
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

	published := make(chan int64, 1)
	lead := func(ctx context.Context, term election.Term) error {
		_, err := client.Create(ctx, "/scheduler/last-poll", []byte(strconv.FormatInt(term.FencingToken, 10)), framework.CreatingParents())
		published <- term.FencingToken
		return err
	}
	poller, err := election.NewSelector(client, "/election/poller", lead)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = poller.Close(ctx) }()
	if err := poller.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	token := <-published
	data, _, err := client.Get(ctx, "/scheduler/last-poll")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("the write carries the term's token:", string(data) == strconv.FormatInt(token, 10))
	// Output:
	// the write carries the term's token: true
}

// InterruptLeadership ends the current term: lead's ctx ends with ErrInterrupted.
func ExampleSelector_InterruptLeadership() {
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

	leading, ended := make(chan struct{}), make(chan error, 1)
	lead := func(ctx context.Context, _ election.Term) error {
		close(leading)
		<-ctx.Done()
		ended <- context.Cause(ctx)
		return nil
	}
	poller, err := election.NewSelector(client, "/election/poller", lead)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = poller.Close(ctx) }()
	if err := poller.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	<-leading
	poller.InterruptLeadership()
	fmt.Println("interrupted:", errors.Is(<-ended, election.ErrInterrupted))
	// Output:
	// interrupted: true
}
