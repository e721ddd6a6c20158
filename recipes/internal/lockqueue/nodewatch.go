package lockqueue

import (
	"context"
	"sync"

	"github.com/zkrecipes/zkrecipes/framework"
)

// A holder watches its own node, so that the hold ends as soon as the node is gone
// in a live session: an operator's delete, a script, a server that lost it (an
// expiry is heard as a connection state). The watch is one data watch per holder
// (none per waiter), set by the GetW that also reads our node's czxid, the fencing
// token.
//
// The notification is heard on the client's receiving goroutine (OnWatchEvent), not
// on the watch's channel: the loss is recorded before any later reply of that
// connection is handed out, so a waiter of the same client that is granted the lock
// after our node's deletion finds our hold lost already. One subscriber per client
// serves every held node of that client, from its first hold to its close:
// registering a subscriber copies the client's list of them, which a subscriber per
// hold, or per client whenever it holds nothing, would do for every grant of a lock
// taken in turn (7 of its allocations).
type nodeWatches struct {
	mu     sync.Mutex
	byPath map[string]*follower
}

// follower is who hears a node's notifications: a Tracker, or the next one of the
// same participant (Held.Pass).
type follower struct{ t *Tracker }

var (
	watchesMu sync.Mutex
	watches   = map[*framework.Client]*nodeWatches{}
)

// watchNode makes t hear the notifications of its node p until the returned stop is
// called; pass hands them to another Tracker. It sets no watch on the server: the
// caller's GetW does.
func watchNode(c *framework.Client, p string, t *Tracker) (stop func(), pass func(*Tracker)) {
	watchesMu.Lock()
	w := watches[c]
	if w == nil {
		w = &nodeWatches{byPath: map[string]*follower{}}
		watches[c] = w
		stop := c.OnWatchEvent(w.heard)
		context.AfterFunc(c.ForRecipes().Context(), func() {
			stop()
			watchesMu.Lock()
			defer watchesMu.Unlock()
			if watches[c] == w {
				delete(watches, c)
			}
		})
	}
	watchesMu.Unlock()
	f := &follower{t}
	w.mu.Lock()
	w.byPath[p] = f
	w.mu.Unlock()
	stop = func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.byPath[p] == f {
			delete(w.byPath, p)
		}
	}
	pass = func(next *Tracker) {
		w.mu.Lock()
		f.t = next
		w.mu.Unlock()
	}
	return stop, pass
}

// heard runs on the client's receiving goroutine: it must not block.
func (w *nodeWatches) heard(ev framework.Event) {
	if ev.Type != framework.EventNodeDeleted && ev.Type != framework.EventNodeDataChanged {
		return
	}
	w.mu.Lock()
	var t *Tracker
	if f := w.byPath[ev.Path]; f != nil {
		t = f.t
	}
	w.mu.Unlock()
	if t == nil {
		return
	}
	if ev.Type == framework.EventNodeDeleted {
		t.nodeDeleted()
		return
	}
	t.dataChanged()
}
