package cache

import (
	"errors"
	"fmt"
	"time"

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
	acl   bool  // TrustReadOnly: read the ACL first, and watch the data only if it may change
	fixed bool  // with acl: the copy has the node as read-only, made at czxid
	czxid int64 // (the server's own nodes, /zookeeper..., have czxid 0)
	epoch int32 // the epoch when a reader took it, just before sending it
}

// result is what a read returned. stat is nil when the node does not exist.
type result struct {
	data  []byte
	stat  *framework.Stat
	names []string
	watch <-chan framework.Event
	err   error
	same  bool // an ACL read found the read-only node the copy has: nothing to read
	fixed bool // the node's ACL lets no one change its data: read with no watch
}

// failure is a read to send again after a connection error.
type failure struct {
	e    *entry
	kind readKind
}

// loop runs everything that touches the tree, one thing at a time, until Close or
// the client's close.
func (en *engine) loop() {
	defer en.running.Done()
	for {
		fn, ok := en.inbox.Pop(en.ctx.Done())
		if !ok {
			return
		}
		fn()
		select {
		case <-en.halted:
			return // the client closed: Stopped is the last event
		default:
		}
		en.checkSettled()
	}
}

// checkSettled says Initialized or Synced once every needed read is done.
func (en *engine) checkSettled() {
	if !en.syncing || en.unsettled > 0 || en.holding {
		return
	}
	en.syncing = false
	typ := Synced
	if !en.ready {
		en.ready, typ = true, Initialized
	}
	en.say(Event{Type: typ})
}

// say emits an event that changes nothing in the copy.
func (en *engine) say(ev Event) {
	en.store.mu.Lock()
	en.emit(ev)
	en.store.mu.Unlock()
}

// want makes e's read of kind k needed for a complete copy: one sent in the current
// epoch, that is after the last Suspended or Lost.
func (en *engine) want(e *entry, k readKind) {
	if e.is(refused) || e.is(removed) || en.stopped {
		return
	}
	rs := &e.reads[k]
	if !rs.is(need) {
		rs.mark(need, true)
		en.unsettled++
	}
	e.needEpoch[k] = en.epoch.Load()
	if !rs.is(pending) {
		en.dispatch(e, k)
	}
}

// refresh reads e again after its watch of kind k fired: after the read in flight,
// if there is one, since it may have been answered before the change.
func (en *engine) refresh(e *entry, k readKind) {
	if rs := &e.reads[k]; rs.is(pending) {
		rs.mark(again, true)
		return
	}
	en.dispatch(e, k)
}

// dispatch sends a read of e. It sets a watch unless one set by an earlier read is
// still armed: a second would be the same watch on the server, and one more channel
// for go-zookeeper to keep until it fires.
func (en *engine) dispatch(e *entry, k readKind) {
	if e.is(refused) || e.is(removed) || en.stopped {
		return
	}
	rs := &e.reads[k]
	rs.mark(pending, true)
	t := task{e: e, kind: k, probe: k == dataRead && e.is(absent)}
	if en.o.trustReadOnly && !en.persistent && k == dataRead && e != en.root && (e.is(fixed) || !e.live) {
		t.acl, t.fixed, t.czxid = true, e.is(fixed), e.stat.Czxid
	}
	if en.holding {
		en.held = append(en.held, t)
		return
	}
	t.watch = !rs.is(armed) && !en.persistent
	en.send(t)
}

// send hands t to a reader: a new one while fewer than maxReads are running, else
// the next that finishes its read. Called on the loop only.
func (en *engine) send(t task) {
	r := &en.readers
	r.mu.Lock()
	if r.running == maxReads {
		r.queue = append(r.queue, t)
		r.mu.Unlock()
		return
	}
	r.running++
	r.mu.Unlock()
	en.running.Add(1) // the loop holds a count of its own: Close's Wait has not ended
	go en.reader(t)
}

// reader sends t, then the queued reads one at a time, and ends when none is left
// or the cache is closed: an idle cache has no reader.
func (en *engine) reader(t task) {
	defer en.running.Done()
	r := &en.readers
	for {
		en.sendOne(t)
		r.mu.Lock()
		if len(r.queue) == 0 || en.ctx.Err() != nil {
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
func (en *engine) sendOne(t task) {
	// Stamp before looking at holding: Lost sets holding first, then moves the
	// epoch, so a read that escapes the hold has an epoch before the Lost.
	t.epoch = en.epoch.Load()
	if t.kind != syncRead && en.holdingNow.Load() {
		en.inbox.Push(func() { en.hold(t) })
		return
	}
	r := en.read(t)
	en.inbox.Push(func() { en.done(t, r) })
}

// hold keeps a read back until the new session's Sync, or sends it if that is done.
func (en *engine) hold(t task) {
	if en.holding {
		en.held = append(en.held, t)
		return
	}
	t.watch = !t.e.reads[t.kind].is(armed) && !en.persistent
	en.send(t)
}

// read sends one request. A missing node is a result (stat nil), not an error.
func (en *engine) read(t task) (r result) {
	ctx, p := en.ctx, t.e.path
	var ok bool
	switch {
	case t.kind == syncRead:
		r.err = en.c.Sync(ctx, p)
	case t.kind == childRead && t.watch:
		r.names, r.stat, r.watch, r.err = en.c.ChildrenW(ctx, p)
	case t.kind == childRead:
		r.names, r.stat, r.err = en.c.Children(ctx, p)
	case t.probe && t.watch:
		ok, r.stat, r.watch, r.err = en.c.ExistsW(ctx, p)
	case t.probe:
		ok, r.stat, r.err = en.c.Exists(ctx, p)
	case t.acl:
		r = en.readACLFirst(t)
	case t.watch:
		r.data, r.stat, r.watch, r.err = en.c.GetW(ctx, p)
	default:
		r.data, r.stat, r.err = en.c.Get(ctx, p)
	}
	if errors.Is(r.err, framework.ErrNoNode) || (t.probe && r.err == nil && !ok) {
		r.err, r.stat = nil, nil
	}
	return r
}

// readACLFirst reads the ACL of a node the copy does not have, or has as read-only
// (TrustReadOnly), then its data: with no watch if the ACL lets no one change it.
func (en *engine) readACLFirst(t task) (r result) {
	acl, stat, err := en.c.GetACL(en.ctx, t.e.path)
	switch {
	case err != nil:
		r.err = err
		return r
	case t.fixed && stat.Czxid == t.czxid:
		r.stat, r.same = stat, true
		return r
	case readOnly(acl):
		r.data, r.stat, r.err = en.c.Get(en.ctx, t.e.path)
		if r.err != nil || r.stat.Czxid == stat.Czxid {
			r.fixed = r.err == nil
			return r
		}
		// Made again between the two reads, with an ACL not read: read it as any node.
	}
	t.acl = false
	return en.read(t)
}

// readOnly says whether acl grants no one WRITE or ADMIN: the node's data and ACL
// can never change then.
func readOnly(acl []framework.ACL) bool {
	for _, a := range acl {
		if a.Perms&(framework.PermWrite|framework.PermAdmin) != 0 {
			return false
		}
	}
	return true
}

// done applies a read's result, on the loop.
func (en *engine) done(t task, r result) {
	en.checkHistory()
	if t.kind == syncRead {
		en.synced(t, r.err)
		return
	}
	e, rs := t.e, &t.e.reads[t.kind]
	rs.mark(pending, false)
	if r.watch != nil && !rs.is(firedDuring) {
		rs.mark(armed, true)
	}
	rs.mark(firedDuring, false)
	if e.is(removed) {
		return
	}
	if rs.is(stale) { // sent before the node's deletion was heard: it may show the node
		rs.mark(stale, false)
		en.dispatch(e, t.kind)
		return
	}
	answered := false
	switch {
	case r.err == nil && t.epoch < en.lostEpoch:
		// Sent before the session was lost, or in the new session before its Sync: it
		// may show an older state than the copy has.
		rs.mark(again, true)
	case r.err == nil && t.kind == dataRead:
		answered = en.gotData(e, t, r)
	case r.err == nil:
		answered = en.gotChildren(e, r)
	case errors.Is(r.err, framework.ErrNoAuth):
		en.refuse(e, r.err)
		return
	case errors.Is(r.err, framework.ErrClosed):
		en.stopped = true // the client is closed: nothing more can be read
		return
	case en.ctx.Err() != nil:
		return
	default:
		en.log.Debug("zkrecipes: cache read failed; will retry", "path", e.path, "error", r.err)
		en.failed = append(en.failed, failure{e, t.kind})
		en.armRetry()
		return
	}
	if answered && rs.is(need) {
		if t.epoch >= e.needEpoch[t.kind] {
			en.settled(e, t.kind)
		} else {
			rs.mark(again, true) // sent before the connection came back: read once more
		}
	}
	if rs.is(again) && !rs.is(pending) {
		rs.mark(again, false)
		en.dispatch(e, t.kind)
	}
}

// refuse reports a node an ACL does not let the client read, once, and reads it no
// more: a refusal does not go away by asking again.
func (en *engine) refuse(e *entry, err error) {
	en.settled(e, dataRead)
	en.settled(e, childRead)
	if e.is(refused) {
		return
	}
	e.mark(refused, true)
	en.say(Event{Type: Error, Path: e.path, Err: fmt.Errorf("%w: %s: %w", ErrRefused, e.path, err)})
}

// connection follows the client's connection states.
func (en *engine) connection(s framework.ConnectionState) {
	switch s {
	case framework.Suspended:
		en.epoch.Add(1)
		en.say(Event{Type: Suspended})
	case framework.Lost:
		// The new session may reach a server that is behind the one the copy was read
		// from: hold every read until a Sync has brought it up to date.
		en.holding = true
		en.holdingNow.Store(true)
		en.lostEpoch = en.epoch.Add(1)
		en.say(Event{Type: Lost})
		en.send(task{e: en.root, kind: syncRead})
	case framework.Rebuilt:
		en.checkHistory()
	case framework.Connected, framework.Reconnected:
		en.retryFailed()
		if s == framework.Reconnected && !en.persistent { // the watch's Reset says it
			en.resync()
		}
	}
}

// resync reads every node again, to report what changed while the connection was
// down, and says Synced when done.
func (en *engine) resync() {
	en.syncing = true
	en.root.each(func(e *entry) {
		en.want(e, dataRead)
		if e.live && en.follows(e) {
			en.want(e, childRead)
		}
	})
}

// synced ends the hold after a session loss, once the new session's server has
// caught up.
func (en *engine) synced(t task, err error) {
	switch {
	case err == nil && t.epoch < en.lostEpoch:
		en.send(task{e: en.root, kind: syncRead}) // sent before the latest Lost
	case err == nil:
		en.holding = false
		en.holdingNow.Store(false)
		held := en.held
		en.held = nil
		for _, t := range held {
			en.hold(t)
		}
	case errors.Is(err, framework.ErrClosed):
		en.stopped = true
	case en.ctx.Err() != nil:
	default:
		en.failed = append(en.failed, failure{en.root, syncRead})
		en.armRetry()
	}
}

func (en *engine) armRetry() {
	if en.retryArmed {
		return
	}
	en.retryArmed = true
	if en.retry == nil {
		en.retry = time.AfterFunc(retryPause, func() { en.inbox.Push(en.retryFailed) })
		return
	}
	en.retry.Reset(retryPause)
}

// retryFailed sends again the reads that failed on connection errors.
func (en *engine) retryFailed() {
	en.retryArmed = false
	failed := en.failed
	en.failed = nil
	for _, f := range failed {
		switch {
		case f.kind == syncRead:
			en.send(task{e: en.root, kind: syncRead})
		case !f.e.reads[f.kind].is(pending):
			en.dispatch(f.e, f.kind)
		}
	}
}
