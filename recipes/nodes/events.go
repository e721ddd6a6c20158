package nodes

import (
	"slices"
	"sync"
)

// Event is a change of the node's presence, as the PersistentNode sees it.
type Event struct {
	Path string // the node's actual path
	// Present is true when the node was made, made again or taken over, and false
	// when it was found gone (deleted, or gone with its session) or not ours: the
	// PersistentNode is making it again.
	Present bool
}

// events hands Events to listeners in order, on a goroutine of its own, so that
// the keeper never waits for a listener and a listener may call Close.
type events struct {
	mu      sync.Mutex
	fns     map[int]func(Event)
	next    int
	pending []Event
	ready   chan struct{}
}

func newEvents() *events {
	return &events{fns: map[int]func(Event){}, ready: make(chan struct{}, 1)}
}

func (e *events) push(ev Event) {
	e.mu.Lock()
	e.pending = append(e.pending, ev)
	e.mu.Unlock()
	select {
	case e.ready <- struct{}{}:
	default:
	}
}

// run delivers events until stop closes; what is pending then is dropped.
func (e *events) run(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-e.ready:
		}
		e.mu.Lock()
		evs := e.pending
		e.pending = nil
		ids := slices.Sorted(func(yield func(int) bool) {
			for id := range e.fns {
				if !yield(id) {
					return
				}
			}
		})
		fns := make([]func(Event), len(ids))
		for i, id := range ids {
			fns[i] = e.fns[id]
		}
		e.mu.Unlock()
		for _, ev := range evs {
			for _, fn := range fns {
				select {
				case <-stop:
					return
				default:
					fn(ev)
				}
			}
		}
	}
}

func (e *events) listen(fn func(Event)) (stop func()) {
	if fn == nil {
		return func() {}
	}
	e.mu.Lock()
	id := e.next
	e.next++
	e.fns[id] = fn
	e.mu.Unlock()
	return func() {
		e.mu.Lock()
		delete(e.fns, id)
		e.mu.Unlock()
	}
}
