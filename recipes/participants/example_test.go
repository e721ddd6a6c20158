package participants_test

import (
	"fmt"

	"github.com/zkrecipes/zkrecipes/recipes/participants"
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
