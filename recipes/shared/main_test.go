package shared

import (
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(zkrtest.SharedServer(m)) }

const wait = zkrtest.Wait

var (
	testCtx   = zkrtest.Context
	newClient = zkrtest.Client
)

// heard records what a listener heard.
type heard[T any] struct {
	mu   sync.Mutex
	seen []Versioned[T]
}

func (h *heard[T]) add(v Versioned[T]) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seen = append(h.seen, v)
}

func (h *heard[T]) all() []Versioned[T] {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Versioned[T](nil), h.seen...)
}

// last is the last value heard, and whether any was.
func (h *heard[T]) last() (Versioned[T], bool) {
	all := h.all()
	if len(all) == 0 {
		return Versioned[T]{}, false
	}
	return all[len(all)-1], true
}
