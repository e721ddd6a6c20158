package framework

import "sync"

// queue is an unbounded FIFO drained by one goroutine. go-zookeeper's own event
// channel has six slots and drops what does not fit; a state change must never be
// dropped, and the producer (go-zookeeper's connection goroutine) must never block.
type queue[T any] struct {
	mu    sync.Mutex
	items []T
	ready chan struct{}
}

func newQueue[T any]() *queue[T] { return &queue[T]{ready: make(chan struct{}, 1)} }

func (q *queue[T]) push(v T) {
	q.mu.Lock()
	q.items = append(q.items, v)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// drain hands every item to fn, in order, until done is closed.
func (q *queue[T]) drain(done <-chan struct{}, fn func(T)) {
	for {
		select {
		case <-done:
			return
		case <-q.ready:
		}
		q.mu.Lock()
		items := q.items
		q.items = nil
		q.mu.Unlock()
		for _, v := range items {
			select {
			case <-done:
				return
			default:
				fn(v)
			}
		}
	}
}
