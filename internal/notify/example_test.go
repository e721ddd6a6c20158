package notify_test

import (
	"fmt"

	"github.com/zkrecipes/zkrecipes/internal/notify"
)

// A loop pushes changes without waiting; the listeners hear them in order on a
// goroutine of their own.
func ExampleListeners() {
	l := notify.New[string]()
	l.Listen(func(s string) { fmt.Println("heard", s) })
	done := make(chan struct{})
	l.Start(func(s string) {
		if s == "second" {
			close(done)
		}
	})
	l.Push("first")
	l.Push("second")
	<-done
	l.Stop()
	// Output:
	// heard first
	// heard second
}

// Push never waits; Pop waits for an item, or for done.
func ExampleQueue() {
	q := notify.NewQueue[int]()
	q.Push(1)
	q.Push(2)
	done := make(chan struct{})
	for range 2 {
		v, _ := q.Pop(done)
		fmt.Println(v)
	}
	close(done)
	_, ok := q.Pop(done)
	fmt.Println(ok)
	// Output:
	// 1
	// 2
	// false
}
