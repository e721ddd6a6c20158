package notify

import (
	"sync"
	"sync/atomic"
)

// Listeners is a set of listeners and the changes queued for them. A listener hears
// every change pushed after it registered, in the order pushed; each change goes to
// its listeners in the order they registered. The zero value is not usable: make one
// with New.
type Listeners[T any] struct {
	queue *Queue[change[T]]

	mu sync.Mutex
	// first and last link the listeners in the order they registered: a list, so
	// that a listener stops in constant time (a holder's state listener stops with
	// every release, among as many listeners as the client has holds).
	first, last *listener[T]
	pushed      int  // changes pushed so far: a listener hears those numbered above its after
	ended       bool // End or Stop was called: nothing more is queued
	started     bool
	stopped     bool

	stop    chan struct{}  // closed by Stop
	running sync.WaitGroup // Start's goroutine
	calling atomic.Bool    // a listener is being called
}

type listener[T any] struct {
	fn           func(T)
	after        int // the changes pushed before it registered
	prev, next   *listener[T]
	unregistered bool
}

// change is the n-th change pushed, or the mark End leaves.
type change[T any] struct {
	v   T
	n   int
	end bool
}

// New makes an empty set of listeners.
func New[T any]() *Listeners[T] {
	return &Listeners[T]{queue: NewQueue[change[T]](), stop: make(chan struct{})}
}

// Listen registers fn to hear every change pushed after this call; stop unregisters
// it, and may be called from within fn (a delivery already under way may still reach
// fn). A nil fn registers nothing.
func (l *Listeners[T]) Listen(fn func(T)) (stop func()) {
	if fn == nil {
		return func() {}
	}
	l.mu.Lock()
	x := &listener[T]{fn: fn, after: l.pushed, prev: l.last}
	if l.last == nil {
		l.first = x
	} else {
		l.last.next = x
	}
	l.last = x
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if x.unregistered {
			return
		}
		x.unregistered = true
		if x.prev == nil {
			l.first = x.next
		} else {
			x.prev.next = x.next
		}
		if x.next == nil {
			l.last = x.prev
		} else {
			x.next.prev = x.prev
		}
	}
}

// Push queues v for the listeners registered now, without waiting for them. Nothing
// pushed after End or Stop is delivered.
func (l *Listeners[T]) Push(v T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return
	}
	l.pushed++
	l.queue.Push(change[T]{v: v, n: l.pushed})
}

// End makes the delivery end once it has delivered what was pushed before.
func (l *Listeners[T]) End() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.ended {
		l.ended = true
		l.queue.Push(change[T]{end: true})
	}
}

// Run delivers each change pushed, on the caller's goroutine, until End's changes
// are delivered or stop closes (a nil stop never does); what is pending when stop
// closes is dropped. Use Run or Start, once.
func (l *Listeners[T]) Run(stop <-chan struct{}) { l.run(stop, nil) }

// Start delivers as Run does, on a goroutine of its own, until End or Stop; then, if
// not nil, is called with each change once every listener has heard it. A second
// Start, or one after Stop, does nothing.
func (l *Listeners[T]) Start(then func(T)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.started || l.stopped {
		return
	}
	l.started = true
	l.running.Add(1)
	go func() {
		defer l.running.Done()
		l.run(l.stop, then)
	}()
}

// Stop ends the delivery Start began: what is pending is dropped, nothing pushed
// from now on is queued, and no listener is called once Stop returns. Stop cannot
// wait for a listener that called it, so while a listener is being called it does not
// wait: the delivery then ends when that listener returns. Stop is idempotent.
func (l *Listeners[T]) Stop() {
	l.mu.Lock()
	if !l.stopped {
		l.stopped, l.ended = true, true
		close(l.stop)
	}
	l.mu.Unlock()
	if !l.calling.Load() {
		l.running.Wait()
	}
}

func (l *Listeners[T]) run(stop <-chan struct{}, then func(T)) {
	var fns []func(T) // reused: one delivery at a time
	for {
		c, ok := l.queue.Pop(stop)
		if !ok || c.end {
			return
		}
		fns = l.hearing(c.n, fns[:0])
		for _, fn := range fns {
			select {
			case <-stop:
				return
			default:
			}
			l.calling.Store(true)
			fn(c.v)
			l.calling.Store(false)
		}
		clear(fns)
		if then != nil {
			then(c.v)
		}
	}
}

// hearing appends to fns the listeners of the n-th change: those registered before
// it was pushed, and still registered.
func (l *Listeners[T]) hearing(n int, fns []func(T)) []func(T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for x := l.first; x != nil; x = x.next {
		if x.after < n {
			fns = append(fns, x.fn)
		}
	}
	return fns
}
