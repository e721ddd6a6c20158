package framework

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

// goRequest runs fn on a request goroutine, one that Close waits for like any
// background work. It returns false once Close has begun.
func (c *Client) goRequest(fn func()) bool {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return false
	}
	c.bg.Add(1)
	c.mu.Unlock()
	select {
	case w := <-c.idle:
		w.jobs <- fn
	default:
		w := &worker{jobs: make(chan func(), 1)}
		w.jobs <- fn
		c.workers.Add(1)
		go c.work(w)
	}
	return true
}

// work runs w's requests until there is no room for it among the idle, or the client
// has closed. Close stops the idle only once every request has finished and no new
// one can start, so no request handed over is ever left unrun.
func (c *Client) work(w *worker) {
	defer c.workers.Done()
	for {
		select {
		case fn := <-w.jobs:
			fn()
			c.bg.Done()
		case <-c.stopWorkers:
			return
		}
		select {
		case c.idle <- w:
		default:
			return
		}
	}
}
