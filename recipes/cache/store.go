package cache

import (
	"slices"
	"strings"
	"sync"

	"github.com/zkrecipes/zkrecipes/internal/notify"
)

// store is the copy: read by any goroutine, changed by the engine on its loop, both
// under mu. Events are pushed to the listeners under mu, so that a listener
// registered at any moment hears exactly the events after the copy it could read
// then.
type store struct {
	mu        sync.RWMutex
	nodes     map[string]*entry // every node known below the path, live or not
	live      int               // nodes in the copy
	listeners *notify.Listeners[Event]
}

func newStore() *store {
	return &store{nodes: map[string]*entry{}, listeners: notify.New[Event]()}
}

// get returns the node at path if the copy has it.
func (s *store) get(path string) (Node, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e := s.nodes[path]
	if e == nil || !e.live {
		return Node{}, false
	}
	return e.copy(), true
}

// children returns the sorted names of the children of path in the copy; nil if the
// copy has no node at path.
func (s *store) children(path string) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e := s.nodes[path]
	if e == nil || !e.live {
		return nil
	}
	names := make([]string, 0, len(e.kids))
	for name, kid := range e.kids {
		if kid.live {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// len is the number of nodes in the copy.
func (s *store) len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.live
}

// all returns every node of the copy, sorted by path.
func (s *store) all() []Node {
	s.mu.RLock()
	out := make([]Node, 0, s.live)
	for _, e := range s.nodes {
		if e.live {
			out = append(out, e.copy())
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b Node) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// listen registers fn to hear the events pushed after this call.
func (s *store) listen(fn func(Event)) (stop func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listeners.Listen(fn)
}

// push queues ev for the listeners; s.mu is held.
func (s *store) push(ev Event) { s.listeners.Push(ev) }
