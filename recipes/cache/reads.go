package cache

import (
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/framework"
)

// retryPause is how long a read that failed on a connection error waits before it
// is sent again, unless the connection comes back first. The client has already
// retried it as its retry policy says; this only keeps the copy converging after the
// policy gave up.
const retryPause = time.Second

// task is one read for a worker.
type task struct {
	e     *entry
	kind  readKind
	watch bool  // set a watch with the read
	probe bool  // the root is missing: check its existence
	epoch int32 // the epoch when a reader took it, just before sending it
}

// result is what a read returned. stat is nil when the node does not exist.
type result struct {
	data  []byte
	stat  *zk.Stat
	names []string
	watch <-chan zk.Event
	err   error
}

// failure is a read to send again after a connection error.
type failure struct {
	e    *entry
	kind readKind
}

// loop runs everything that touches the tree, one thing at a time, until Close or
// the client's close.
func (ca *Cache) loop() {
	defer ca.running.Done()
	for {
		fn, ok := ca.inbox.Pop(ca.ctx.Done())
		if !ok {
			return
		}
		fn()
		select {
		case <-ca.halted:
			return // the client closed: Stopped is the last event
		default:
		}
		ca.checkSettled()
	}
}

// checkSettled says Initialized or Synced once every needed read is done.
func (ca *Cache) checkSettled() {
	if !ca.syncing || ca.unsettled > 0 || ca.holding {
		return
	}
	ca.syncing = false
	typ := Synced
	if !ca.ready {
		ca.ready, typ = true, Initialized
	}
	ca.say(Event{Type: typ})
}

// say emits an event that changes nothing in the copy.
func (ca *Cache) say(ev Event) {
	ca.mu.Lock()
	ca.emit(ev)
	ca.mu.Unlock()
}

// want makes e's read of kind k needed for a complete copy: one sent in the current
// epoch, that is after the last Suspended or Lost.
func (ca *Cache) want(e *entry, k readKind) {
	if e.refused || e.removed || ca.stopped {
		return
	}
	rs := &e.reads[k]
	if !rs.need {
		rs.need = true
		ca.unsettled++
	}
	rs.needEpoch = ca.epoch.Load()
	if !rs.pending {
		ca.dispatch(e, k)
	}
}

// refresh reads e again after its watch of kind k fired: after the read in flight,
// if there is one, since it may have been answered before the change.
func (ca *Cache) refresh(e *entry, k readKind) {
	if rs := &e.reads[k]; rs.pending {
		rs.again = true
		return
	}
	ca.dispatch(e, k)
}

// dispatch sends a read of e. It sets a watch unless one set by an earlier read is
// still armed: a second would be the same watch on the server, and one more channel
// for go-zookeeper to keep until it fires.
func (ca *Cache) dispatch(e *entry, k readKind) {
	if e.refused || e.removed || ca.stopped {
		return
	}
	rs := &e.reads[k]
	rs.pending = true
	t := task{e: e, kind: k, probe: k == dataRead && e.absent}
	if ca.holding {
		ca.held = append(ca.held, t)
		return
	}
	t.watch = !rs.armed
	ca.send(t)
}

// send hands t to a reader: a new one while fewer than maxReads are running, else
// the next that finishes its read. Called on the loop only.
func (ca *Cache) send(t task) {
	r := &ca.readers
	r.mu.Lock()
	if r.running == maxReads {
		r.queue = append(r.queue, t)
		r.mu.Unlock()
		return
	}
	r.running++
	r.mu.Unlock()
	ca.running.Add(1) // the loop holds a count of its own: Close's Wait has not ended
	go ca.reader(t)
}

// reader sends t, then the queued reads one at a time, and ends when none is left
// or the cache is closed: an idle cache has no reader.
func (ca *Cache) reader(t task) {
	defer ca.running.Done()
	r := &ca.readers
	for {
		ca.sendOne(t)
		r.mu.Lock()
		if len(r.queue) == 0 || ca.ctx.Err() != nil {
			r.running--
			r.mu.Unlock()
			return
		}
		t = r.queue[0]
		r.queue[0] = task{}
		r.queue = r.queue[1:]
		if len(r.queue) == 0 {
			r.queue = nil // let go of the array a burst grew
		}
		r.mu.Unlock()
	}
}

// sendOne sends a read and hands its result to the loop.
func (ca *Cache) sendOne(t task) {
	// Stamp before looking at holding: Lost sets holding first, then moves the
	// epoch, so a read that escapes the hold has an epoch before the Lost.
	t.epoch = ca.epoch.Load()
	if t.kind != syncRead && ca.holdingNow.Load() {
		ca.inbox.Push(func() { ca.hold(t) })
		return
	}
	r := ca.read(t)
	ca.inbox.Push(func() { ca.done(t, r) })
}

// hold keeps a read back until the new session's Sync, or sends it if that is done.
func (ca *Cache) hold(t task) {
	if ca.holding {
		ca.held = append(ca.held, t)
		return
	}
	t.watch = !t.e.reads[t.kind].armed
	ca.send(t)
}

// read sends one request. A missing node is a result (stat nil), not an error.
func (ca *Cache) read(t task) (r result) {
	ctx, p := ca.ctx, t.e.path
	var ok bool
	switch {
	case t.kind == syncRead:
		r.err = ca.c.Sync(ctx, p)
	case t.kind == childRead && t.watch:
		r.names, r.stat, r.watch, r.err = ca.c.ChildrenW(ctx, p)
	case t.kind == childRead:
		r.names, r.stat, r.err = ca.c.Children(ctx, p)
	case t.probe && t.watch:
		ok, r.stat, r.watch, r.err = ca.c.ExistsW(ctx, p)
	case t.probe:
		ok, r.stat, r.err = ca.c.Exists(ctx, p)
	case t.watch:
		r.data, r.stat, r.watch, r.err = ca.c.GetW(ctx, p)
	default:
		r.data, r.stat, r.err = ca.c.Get(ctx, p)
	}
	if errors.Is(r.err, zk.ErrNoNode) || (t.probe && r.err == nil && !ok) {
		r.err, r.stat = nil, nil
	}
	return r
}

// done applies a read's result, on the loop.
func (ca *Cache) done(t task, r result) {
	if t.kind == syncRead {
		ca.synced(t, r.err)
		return
	}
	e, rs := t.e, &t.e.reads[t.kind]
	rs.pending = false
	if r.watch != nil && !rs.firedDuring {
		rs.armed = true
	}
	rs.firedDuring = false
	if e.removed {
		return
	}
	answered := false
	switch {
	case r.err == nil && t.epoch < ca.lostEpoch:
		// Sent before the session was lost, or in the new session before its Sync: it
		// may show an older state than the copy has.
		rs.again = true
	case r.err == nil && t.kind == dataRead:
		answered = ca.gotData(e, t, r)
	case r.err == nil:
		answered = ca.gotChildren(e, r)
	case errors.Is(r.err, zk.ErrNoAuth):
		ca.refuse(e, r.err)
		return
	case errors.Is(r.err, framework.ErrClosed):
		ca.stopped = true // the client is closed: nothing more can be read
		return
	case ca.ctx.Err() != nil:
		return
	default:
		ca.log.Debug("zkrecipes: cache read failed; will retry", "path", e.path, "error", r.err)
		ca.failed = append(ca.failed, failure{e, t.kind})
		ca.armRetry()
		return
	}
	if answered && rs.need {
		if t.epoch >= rs.needEpoch {
			ca.settled(e, t.kind)
		} else {
			rs.again = true // sent before the connection came back: read once more
		}
	}
	if rs.again && !rs.pending {
		rs.again = false
		ca.dispatch(e, t.kind)
	}
}

// refuse reports a node an ACL does not let the client read, once, and reads it no
// more: a refusal does not go away by asking again.
func (ca *Cache) refuse(e *entry, err error) {
	ca.settled(e, dataRead)
	ca.settled(e, childRead)
	if e.refused {
		return
	}
	e.refused = true
	ca.say(Event{Type: Error, Path: e.path, Err: fmt.Errorf("%w: %s: %w", ErrRefused, e.path, err)})
}

// connection follows the client's connection states.
func (ca *Cache) connection(s framework.ConnectionState) {
	switch s {
	case framework.Suspended:
		ca.epoch.Add(1)
		ca.say(Event{Type: Suspended})
	case framework.Lost:
		// The new session may reach a server that is behind the one the copy was read
		// from: hold every read until a Sync has brought it up to date.
		ca.holding = true
		ca.holdingNow.Store(true)
		ca.lostEpoch = ca.epoch.Add(1)
		ca.say(Event{Type: Lost})
		ca.send(task{e: ca.root, kind: syncRead})
	case framework.Connected, framework.Reconnected:
		ca.retryFailed()
		if s == framework.Reconnected {
			ca.resync()
		}
	}
}

// resync reads every node again, to report what changed while the connection was
// down, and says Synced when done.
func (ca *Cache) resync() {
	ca.syncing = true
	for _, e := range ca.nodes {
		ca.want(e, dataRead)
		if e.live && ca.follows(e) {
			ca.want(e, childRead)
		}
	}
}

// synced ends the hold after a session loss, once the new session's server has
// caught up.
func (ca *Cache) synced(t task, err error) {
	switch {
	case err == nil && t.epoch < ca.lostEpoch:
		ca.send(task{e: ca.root, kind: syncRead}) // sent before the latest Lost
	case err == nil:
		ca.holding = false
		ca.holdingNow.Store(false)
		held := ca.held
		ca.held = nil
		for _, t := range held {
			ca.hold(t)
		}
	case errors.Is(err, framework.ErrClosed):
		ca.stopped = true
	case ca.ctx.Err() != nil:
	default:
		ca.failed = append(ca.failed, failure{ca.root, syncRead})
		ca.armRetry()
	}
}

func (ca *Cache) armRetry() {
	if ca.retryArmed {
		return
	}
	ca.retryArmed = true
	if ca.retry == nil {
		ca.retry = time.AfterFunc(retryPause, func() { ca.inbox.Push(ca.retryFailed) })
		return
	}
	ca.retry.Reset(retryPause)
}

// retryFailed sends again the reads that failed on connection errors.
func (ca *Cache) retryFailed() {
	ca.retryArmed = false
	failed := ca.failed
	ca.failed = nil
	for _, f := range failed {
		switch {
		case f.kind == syncRead:
			ca.send(task{e: ca.root, kind: syncRead})
		case !f.e.reads[f.kind].pending:
			ca.dispatch(f.e, f.kind)
		}
	}
}
