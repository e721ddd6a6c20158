// Package notify hands a recipe's changes to its listeners: in order, one call at a
// time, on a goroutine of the recipe's own. The recipe's loop pushes a change and
// goes on at once, so a listener that blocks never holds up the loop, and a listener
// may call the recipe's Close, which waits for the loop but never for a listener.
package notify

import (
	"maps"
	"slices"
	"sync"
)

// Listeners is a set of listeners and the changes queued for them. The zero value is
// not usable: make one with New.
type Listeners[T any] struct {
	mu      sync.Mutex
	fns     map[int]func(T)
	next    int
	pending []T
	ended   bool
	ready   chan struct{} // holds a token while changes may be pending
}

// New makes an empty set of listeners.
func New[T any]() *Listeners[T] {
	return &Listeners[T]{fns: map[int]func(T){}, ready: make(chan struct{}, 1)}
}

// Listen registers fn; stop unregisters it, and may be called from within fn. A nil
// fn registers nothing.
func (l *Listeners[T]) Listen(fn func(T)) (stop func()) {
	if fn == nil {
		return func() {}
	}
	l.mu.Lock()
	id := l.next
	l.next++
	l.fns[id] = fn
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		delete(l.fns, id)
		l.mu.Unlock()
	}
}

// Push queues v for the listeners, without waiting for them. Nothing pushed after End
// is delivered.
func (l *Listeners[T]) Push(v T) {
	l.mu.Lock()
	if !l.ended {
		l.pending = append(l.pending, v)
	}
	l.mu.Unlock()
	l.signal()
}

// End makes Run return once it has delivered what was pushed before.
func (l *Listeners[T]) End() {
	l.mu.Lock()
	l.ended = true
	l.mu.Unlock()
	l.signal()
}

func (l *Listeners[T]) signal() {
	select {
	case l.ready <- struct{}{}:
	default:
	}
}

// Run calls the listeners with each change pushed, in order, in the order they
// registered, until End's changes are delivered or stop closes (a nil stop never
// does); what is pending when stop closes is dropped. A change goes to the listeners
// registered when its delivery begins.
func (l *Listeners[T]) Run(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-l.ready:
		}
		l.mu.Lock()
		pending, ended := l.pending, l.ended
		l.pending = nil
		fns := make([]func(T), 0, len(l.fns))
		for _, id := range slices.Sorted(maps.Keys(l.fns)) {
			fns = append(fns, l.fns[id])
		}
		l.mu.Unlock()
		for _, v := range pending {
			for _, fn := range fns {
				select {
				case <-stop:
					return
				default:
					fn(v)
				}
			}
		}
		if ended {
			return
		}
	}
}
