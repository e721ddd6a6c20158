package lockqueue

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkDecide is a waiter's verdict on a listing of 32 Curator-named nodes, the
// work every wake-up of a 32-session contended mutex does.
func BenchmarkDecide(b *testing.B) {
	names := []string{"lock-"}
	children := make([]string, 32)
	for i := range children {
		children[i] = fmt.Sprintf("_c_0f8fad5b-d9cb-469f-a165-%012d-lock-%010d", i, 1000+i)
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(children), func(i, j int) { children[i], children[j] = children[j], children[i] })
	ours := children[7]
	b.ReportAllocs()
	for b.Loop() {
		if _, _, _, err := decide(children, names, ours, Exclusive); err != nil {
			b.Fatal(err)
		}
	}
}
