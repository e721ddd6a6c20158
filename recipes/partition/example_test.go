package partition_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/partition"
	"github.com/zkrecipes/zkrecipes/zktest"
)

func ExamplePartitioner() {
	ctx := context.Background()
	srv, err := zktest.StartServer(ctx) // a throwaway ZooKeeper; use your ensemble's addresses
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()

	// Three replicas share six jobs; each job runs on exactly one of them.
	jobs := []string{"billing", "emails", "exports", "indexing", "reports", "thumbnails"}
	var mu sync.Mutex
	runningOn := map[string]string{}
	var replicas []*partition.Partitioner
	for _, id := range []string{"replica-1", "replica-2", "replica-3"} {
		client, err := framework.New([]string{srv.Addr()}) // one session per replica
		if err != nil {
			fmt.Println(err)
			return
		}
		defer client.Close()
		work := func(ctx context.Context, job partition.Item) error {
			mu.Lock()
			runningOn[job.Name] = id
			mu.Unlock()
			<-ctx.Done() // run the job until it moves or may be lost
			return nil
		}
		p, err := partition.New(client, "/scheduler", work, partition.WithID(id), partition.Items(jobs...))
		if err != nil {
			fmt.Println(err)
			return
		}
		if err := p.Start(ctx); err != nil {
			fmt.Println(err)
			return
		}
		defer p.Close(ctx)
		replicas = append(replicas, p)
	}

	// Each replica settles on two jobs.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if len(replicas[0].Owned()) == 2 && len(replicas[1].Owned()) == 2 && len(replicas[2].Owned()) == 2 {
			break
		}
	}
	var all []string
	for _, p := range replicas {
		all = append(all, p.Owned()...)
	}
	slices.Sort(all)
	fmt.Println("owned, once each:", slices.Equal(all, jobs))
	// Output:
	// owned, once each: true
}
