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
	root      *entry // the node at the path, and through its kids every node known below it, live or not
	live      int    // nodes in the copy
	listeners *notify.Listeners[Event]
}

func newStore(path string) *store {
	return &store{root: &entry{path: path}, listeners: notify.New[Event]()}
}

// find returns the entry of the node at p, and of its parent, each nil if the tree
// has none: p is looked up from the root, a name at a time in the kids maps, with no
// allocation. A map by path beside the kids maps found a node in one step, but gave
// every node a second map slot, 43 bytes of the 305 a cached node cost
// (BenchmarkLoad); a walk costs a map lookup a level, and lookups are few: one a
// notification (with its parent, which the engine needs too) and one a Get or
// Children. The kids maps stay: listing a node's children and deleting one are
// O(children) and O(1) with them. It runs on the loop, or under mu.
func (s *store) find(p string) (parent, e *entry) {
	rest, ok := strings.CutPrefix(p, s.root.path)
	switch {
	case !ok:
		return nil, nil
	case rest == "":
		return nil, s.root
	case s.root.path != "/": // "/" ends in the slash that other roots' kids begin with
		if rest, ok = strings.CutPrefix(rest, "/"); !ok {
			return nil, nil // a sibling with a longer name
		}
	}
	for e := s.root; e != nil; {
		name, below, more := strings.Cut(rest, "/")
		if !more {
			return e, e.kids[name]
		}
		e, rest = e.kids[name], below
	}
	return nil, nil
}

// get returns the node at path if the copy has it.
func (s *store) get(path string) (Node, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, e := s.find(path)
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
	_, e := s.find(path)
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
	s.root.each(func(e *entry) {
		if e.live {
			out = append(out, e.copy())
		}
	})
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
