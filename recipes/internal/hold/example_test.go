package hold_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkrecipes/zkrecipes/recipes/internal/hold"
)

// flag is a Lock held in this process alone, to show Do's order.
type flag struct {
	held bool
	lost chan struct{}
}

func (f *flag) Acquire(context.Context) error { f.held = true; return nil }
func (f *flag) Release(context.Context) error { f.held = false; return nil }
func (f *flag) Context(parent context.Context) (context.Context, context.CancelFunc) {
	return hold.Context(parent, errors.New("flag lost"), f.lost)
}

// Do runs the function while the lock is held, and releases it however the function
// ends.
func ExampleDo() {
	f := &flag{lost: make(chan struct{})}
	err := hold.Do(context.Background(), f, func(ctx context.Context) error {
		fmt.Println("held:", f.held)
		return errors.New("the work failed")
	}, errors.New("invalid"))
	fmt.Println("held after:", f.held, "error:", err)
	// Output:
	// held: true
	// held after: false error: the work failed
}
