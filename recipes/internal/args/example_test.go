package args_test

import (
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
