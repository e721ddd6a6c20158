package participants_test

import (
	"context"
	"fmt"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/mutex"
	"github.com/zkrecipes/zkrecipes/recipes/participants"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// A read/write lock's listing just after the server's sequence counter wrapped
// past 2147483647: the reader from before the wrap holds, the writer after it
// waits, and so does the reader behind the writer. A foreign node takes no part.
func ExampleOrder() {
	children := []string{
		"_c_7b3c0a52-1f7e-4c1e-9a51-2d0c6e1c9b11-read--2147483647",
		"_c_0f8fad5b-d9cb-469f-a165-70867728950e-read-2147483647",
		"notes",
		"_c_e4d2a1b9-5c3f-4b7a-8e6d-0a9b8c7d6e5f-write--2147483648",
	}
	for _, p := range participants.Order(children, participants.RWLock) {
		fmt.Println(p.Name[len("_c_")+36+1:], p.Kind, p.Holds) // the name after the protected prefix
	}
	// Output:
	// read-2147483647 read true
	// write--2147483648 write false
	// read--2147483647 read false
}

// Read shows a lock's queue as any process sees it, knowing only the path: here a
// mutex held by one participant while another waits.
func ExampleRead() {
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

	holder, _ := mutex.New(client, "/locks/report", mutex.WithID("worker-1"))
	waiter, _ := mutex.New(client, "/locks/report", mutex.WithID("worker-2"))
	if err := holder.Acquire(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer holder.Release(ctx)
	waitCtx, stopWaiting := context.WithCancel(ctx)
	waited := make(chan error, 1)
	go func() { waited <- waiter.Acquire(waitCtx) }()
	defer func() { stopWaiting(); <-waited }()
	deadline := time.Now().Add(30 * time.Second)
	for ps, _ := waiter.Participants(ctx); len(ps) < 2 && time.Now().Before(deadline); ps, _ = waiter.Participants(ctx) {
		time.Sleep(10 * time.Millisecond) // until the waiter has queued
	}

	ps, err := participants.Read(ctx, participants.FromClient(client), "/locks/report", participants.Mutex)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range ps {
		fmt.Println(p.ID, p.Kind, p.Holds)
	}
	// Output:
	// worker-1 lock true
	// worker-2 lock false
}
