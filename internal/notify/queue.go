package notify

import "sync"

// Queue is an unbounded FIFO whose Push never blocks: go-zookeeper's own event
// channel has six slots and drops what does not fit, and a state change, a watch
// firing or a read's result must never be dropped, nor make its producer wait. The
// zero value is not usable: make one with NewQueue.
type Queue[T any] struct {
	mu    sync.Mutex
	items []T
	ready chan struct{} // holds a token while items may be waiting
}

// NewQueue makes an empty queue.
func NewQueue[T any]() *Queue[T] { return &Queue[T]{ready: make(chan struct{}, 1)} }

// Push adds v at the end, at once.
func (q *Queue[T]) Push(v T) {
	q.mu.Lock()
	q.items = append(q.items, v)
	q.mu.Unlock()
	q.signal()
}

func (q *Queue[T]) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// Pop takes the oldest item, waiting for one, until done closes (a nil done never
// does): then it returns false, even if items are left, so that what is pending when
// done closes is dropped. Several goroutines may pop: a taker that leaves items
// behind passes the token on.
func (q *Queue[T]) Pop(done <-chan struct{}) (T, bool) {
	var zero T
	for {
		select {
		case <-done:
			return zero, false
		default:
		}
		q.mu.Lock()
		if len(q.items) > 0 {
			v := q.items[0]
			q.items[0] = zero
			q.items = q.items[1:]
			more := len(q.items) > 0
			if !more {
				q.items = nil // let go of the array a burst grew, not keep it for ever
			}
			q.mu.Unlock()
			if more {
				q.signal()
			}
			return v, true
		}
		q.mu.Unlock()
		select {
		case <-q.ready:
		case <-done:
			return zero, false
		}
	}
}
