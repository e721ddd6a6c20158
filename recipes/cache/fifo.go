package cache

import "sync"

// fifo is an unbounded queue that never blocks its producers: a watch firing or a
// read's result must reach the loop even while the loop is busy, and the loop must
// never wait for a worker or a listener.
type fifo[T any] struct {
	mu    sync.Mutex
	items []T
	ready chan struct{} // holds a token while items may be waiting
}

func newFifo[T any]() *fifo[T] { return &fifo[T]{ready: make(chan struct{}, 1)} }

func (q *fifo[T]) push(v T) {
	q.mu.Lock()
	q.items = append(q.items, v)
	q.mu.Unlock()
	q.signal()
}

func (q *fifo[T]) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// pop takes the oldest item, waiting for one until done is closed. Several
// goroutines may pop: a taker that leaves items behind passes the token on.
func (q *fifo[T]) pop(done <-chan struct{}) (T, bool) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			v := q.items[0]
			var zero T
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
			var zero T
			return zero, false
		}
	}
}
