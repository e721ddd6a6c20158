package args_test

import (
	"errors"
	"fmt"

	"github.com/zkrecipes/zkrecipes/recipes/internal/args"
)

// A recipe's constructor checks a name it makes one node of, and wraps the error in
// its own ErrInvalid.
func ExampleCheckName() {
	fmt.Println(args.CheckName("worker-1"))
	fmt.Println(args.CheckName("a/b"))
	// Output:
	// <nil>
	// "a/b" is not a node name: it holds a "/"
}

// A recipe's Option is a func(*options) error: an option refuses a bad value itself,
// naming itself, and the constructor applies every option with Apply, wrapping the
// error in its own ErrInvalid.
func ExampleApply() {
	type options struct{ depth int }
	type Option func(*options) error
	depth := func(n int) Option {
		return func(o *options) error {
			if n < 0 {
				return fmt.Errorf("Depth: %d is negative", n)
			}
			o.depth = n
			return nil
		}
	}
	errInvalid := errors.New("cache: invalid argument")

	o := options{depth: 1}
	fmt.Println(args.Apply(&o, []Option{depth(3)}), o.depth)
	if err := args.Apply(&o, []Option{depth(-1)}); err != nil {
		fmt.Println(fmt.Errorf("%w: %w", errInvalid, err))
	}
	if err := args.Apply(&o, []Option{depth(2), nil}); err != nil {
		fmt.Println(fmt.Errorf("%w: %w", errInvalid, err))
	}
	// Output:
	// <nil> 3
	// cache: invalid argument: Depth: -1 is negative
	// cache: invalid argument: nil Option (option 2 of 2)
}
