package framework

import (
	"context"
	"sync"
)

// go-zookeeper's requests block their caller and take no context, so every request
// a caller may stop waiting for runs on a goroutine of its own (see attempt). A new
// goroutine for each request started on a small stack and grew it inside
// go-zookeeper on every call: a tenth of a contended lock's client CPU went to
// copying stacks. Finished request goroutines therefore wait, a few per client, to
// run the next request with the stack they already have.

// idleWorkers is how many request goroutines a client keeps waiting: enough for a
// session's usual handful of concurrent requests; a burst beyond it gets goroutines
// that end when their request does.
const idleWorkers = 4

// worker is a request goroutine; jobs holds at most the one request handed to it.
type worker struct{ jobs chan func() }

// requests is the client's plumbing for work that outlives its caller: requests
// on their goroutines, and background deletes.
type requests struct {
	// bg counts background work and requests, which Close waits for. Added to only
	// under core.mu while the closing phase has not begun, so that Close's Wait
	// never races an Add.
	bg      sync.WaitGroup
	idle    chan *worker   // request goroutines waiting for a request
	workers sync.WaitGroup // every request goroutine
}

// startWork counts one piece of background work, unless Close has begun.
func (c *core) startWork() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing.Err() != nil {
		return false
	}
	c.requests.bg.Add(1)
	return true
}

// goBackground runs fn in a goroutine that Close waits for; fn's context ends when
// Close gives up waiting. It returns false once Close has begun.
func (c *core) goBackground(fn func(ctx context.Context)) bool {
	if !c.startWork() {
		return false
	}
	go func() {
		defer c.requests.bg.Done()
		fn(c.abandoned)
	}()
	return true
}

// goRequest runs fn on a request goroutine, one that Close waits for like any
// background work. It returns false once Close has begun.
func (c *core) goRequest(fn func()) bool {
	if !c.startWork() {
		return false
	}
	r := &c.requests
	select {
	case w := <-r.idle:
		w.jobs <- fn
	default:
		w := &worker{jobs: make(chan func(), 1)}
		w.jobs <- fn
		r.workers.Add(1)
		go c.work(w)
	}
	return true
}

// work runs w's requests until there is no room for it among the idle, or the client
// has closed. Close stops the idle only once every request has finished and no new
// one can start, so no request handed over is ever left unrun.
func (c *core) work(w *worker) {
	r := &c.requests
	defer r.workers.Done()
	for {
		select {
		case fn := <-w.jobs:
			fn()
			r.bg.Done()
		case <-c.drained.Done():
			return
		}
		select {
		case r.idle <- w:
		default:
			return
		}
	}
}
