package framework_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// A store fenced by tokens (a lock holder's FencingToken is its node's czxid) refuses
// every holder after the ensemble is rebuilt, since zxids start again lower there,
// until its fence is reset on purpose. The client says when: Rebuilt. The reset
// lowers only a fence above the rebuilt ensemble's present zxid, read just before:
// a fence of the new history written before that read is below it and stays. One
// written between the read and the reset would be lowered too: reset before the new
// history's holders write, or while holding the lock (docs/locks.md).
func ExampleRebuilt() {
	ctx := context.Background()
	old, err := zktest.StartServer(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer old.Close()
	fresh, err := zktest.StartServer(ctx) // the rebuilt ensemble: empty
	if err != nil {
		fmt.Println(err)
		return
	}
	defer fresh.Close()
	proxy, err := zktest.StartProxy(old.Addr()) // the address the clients know
	if err != nil {
		fmt.Println(err)
		return
	}
	defer proxy.Close()
	client, err := framework.New([]string{proxy.Addr()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	// The store: the highest token it has accepted (in SQL, a fence column:
	// UPDATE ... WHERE fence <= $token, and to reset, UPDATE ... SET fence = 0
	// WHERE fence > $present).
	var mu sync.Mutex
	var fence int64
	write := func(token int64) bool {
		mu.Lock()
		defer mu.Unlock()
		if token < fence {
			return false
		}
		fence = token
		return true
	}
	resetAbove := func(present int64) {
		mu.Lock()
		defer mu.Unlock()
		if fence > present {
			fence = 0
		}
	}

	// A listener must not block: it hands the reset to a goroutine of the program's.
	rebuilt := make(chan struct{}, 1)
	stop := client.Listen(func(s framework.ConnectionState) {
		if s == framework.Rebuilt {
			select {
			case rebuilt <- struct{}{}:
			default:
			}
		}
	})
	defer stop()

	for range 10 { // holders come and go on the old ensemble
		token, err := zxidNow(ctx, client)
		if err != nil {
			fmt.Println(err)
			return
		}
		write(token)
	}

	// The ensemble behind the address is replaced by a fresh one.
	proxy.SetTarget(fresh.Addr())
	proxy.Cut()
	proxy.Restore()
	select {
	case <-rebuilt:
		fmt.Println("the ensemble was rebuilt")
	case <-time.After(time.Minute):
		fmt.Println("no Rebuilt")
		return
	}

	token, err := zxidNow(ctx, client) // a new holder's
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("a new holder's write accepted:", write(token))
	present, err := zxidNow(ctx, client)
	if err != nil {
		fmt.Println(err)
		return
	}
	resetAbove(present)
	fmt.Println("after the reset:", write(token))
	// Output:
	// the ensemble was rebuilt
	// a new holder's write accepted: false
	// after the reset: true
}

// zxidNow is a zxid of the ensemble as it is now: the czxid of a node made for it,
// as a lock holder's node is made when it queues.
func zxidNow(ctx context.Context, client *framework.Client) (int64, error) {
	path, err := client.Create(ctx, "/now-", nil, framework.Ephemeral(), framework.Sequential())
	if err != nil {
		return 0, err
	}
	defer client.Delete(ctx, path, -1)
	_, stat, err := client.Exists(ctx, path)
	if err != nil {
		return 0, err
	}
	return stat.Czxid, nil
}
