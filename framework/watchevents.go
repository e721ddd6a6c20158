package framework

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/go-zookeeper/zk"
)

// watchSubscribers are the functions that hear the client's watch notifications.
// Copied on write, so that go-zookeeper's goroutine reads them without a lock.
type watchSubscribers struct {
	mu   sync.Mutex
	fns  []*func(zk.Event)
	list atomic.Pointer[[]*func(zk.Event)]
}

// OnWatchEvent registers fn to hear every watch notification of the client's
// sessions, as go-zookeeper receives it, before it reaches the channel of the watch
// that asked for it: EventNodeCreated, EventNodeDeleted, EventNodeDataChanged,
// EventNodeChildrenChanged, and EventNotWatching for each watch a session's end
// dropped. Event.Path is relative to the namespace; notifications outside it are not
// passed on. A notification says that every watch of its kind that the session had
// on the path has fired, whichever request set it: a recipe that follows many nodes
// can hear them all here, in the order the server sent them, instead of waiting on a
// channel per watch.
//
// fn runs on go-zookeeper's receiving goroutine: it must return at once (hand the
// event on, never block or call the client), since every reply waits for it. stop
// unregisters fn; a notification already being delivered may still reach it.
func (c *Client) OnWatchEvent(fn func(Event)) (stop func()) {
	if fn == nil {
		return func() {}
	}
	s := &c.watchSubs
	if ns := c.namespace; ns != "" {
		inner := fn
		fn = func(ev zk.Event) {
			p := stripNamespace(ns, ev.Path)
			if p == ev.Path { // outside the namespace
				return
			}
			ev.Path = p
			inner(ev)
		}
	}
	p := &fn
	s.mu.Lock()
	fns := append(slices.Clone(s.fns), p)
	s.fns = fns
	s.list.Store(&fns)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		fns := slices.DeleteFunc(slices.Clone(s.fns), func(q *func(zk.Event)) bool { return q == p })
		s.fns = fns
		s.list.Store(&fns)
		s.mu.Unlock()
	}
}

// watchEvent passes a watch notification of any of the client's handles on, with
// the server's path: each subscriber strips its own client's namespace.
func (c *Client) watchEvent(ev zk.Event) {
	fns := c.watchSubs.list.Load()
	if fns == nil || len(*fns) == 0 {
		return
	}
	for _, fn := range *fns {
		(*fn)(ev)
	}
}
