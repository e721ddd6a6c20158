package framework

import (
	"context"
	"fmt"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/framework/internal/wire"
)

// CreateTrace is what a recipe learns of a protected create that Create's result
// does not say (Plumbing.Traced). Its zero value is ready; one trace serves one
// Create.
//
// A lock's queue sends its listing with its create, so that an acquisition that
// meets no one takes one round trip: in the same write as the create's request
// (ListAfter), so that the server, which answers a session's requests in order,
// lists after it creates. A request sent from another goroutine could reach the
// server first, unless sent once the create's request has been written (Written).
// And the node's czxid (Czxid) is read off the create's reply, so that a fencing
// token needs no read of the node before the grant.
type CreateTrace struct {
	mu      sync.Mutex
	written chan struct{}
	sent    bool
	czxid   int64 // set when Create returns
	// whether the node's ACL lets anyone read it, set when Create returns
	anyoneReads bool
	list        listAfter
}

// listAfter is the listing a create sends in the same write as its request
// (ListAfter). Set before Create, then by its first direct request, on the caller's
// goroutine; read after Create has returned.
type listAfter struct {
	path, full string // the client's, the server's
	watch      bool
	asked      bool // sent: listed and watched are its answer
	listed     <-chan wire.Reply
	watched    <-chan zk.Event
}

// listing is the listing to send with the create's request, if it is still to be
// sent: only with the first request written directly, whose answer comes right
// after the create's.
func (t *CreateTrace) listing() *listAfter {
	if t == nil || t.list.path == "" || t.list.asked {
		return nil
	}
	return &t.list
}

func (l *listAfter) sent(listed <-chan wire.Reply, watched <-chan zk.Event) {
	l.asked, l.listed, l.watched = true, listed, watched
}

// ListAfter makes the traced create send, in the same write as its request, a
// listing of path's children (c's path), with a watch on them if watch: a watch of
// the connection's own, whose channel closes without an event if the connection
// ends first (see Plumbing.WatchData). The server answers the create, then the
// listing: a lock's create and first listing are one round trip and one system
// call. Listing gives its answer once Create has returned.
func (t *CreateTrace) ListAfter(path string, watch bool) {
	t.list = listAfter{path: path, watch: watch}
}

// Listing is the answer to the listing that ListAfter asked for: the children's
// names and, if asked for, the watch on them. ok is false where no listing went
// with the create's request (it went through go-zookeeper: a namespace's first use, a
// connection not open) or its connection ended before the answer: then list. It
// waits for the answer, which follows the create's, until ctx ends.
func (t *CreateTrace) Listing(ctx context.Context) (children []string, watch <-chan Event, ok bool, err error) {
	l := t.list
	if !l.asked {
		return nil, nil, false, nil
	}
	select {
	case r, ok := <-l.listed:
		if !ok {
			return nil, nil, false, nil
		}
		names, _, err := r.ChildrenReply()
		r.Done()
		if err != nil {
			return nil, nil, true, fmt.Errorf("framework: %s: %w", l.path, err)
		}
		if l.watch {
			watch = l.watched
		}
		return names, watch, true, nil
	case <-ctx.Done():
		return nil, nil, true, fmt.Errorf("framework: %s: %w", l.path, ctx.Err())
	}
}

// Traced makes Create report through t. Only a protected create is traced: its
// path is the one the create's request carries, and no other request of the client
// carries it.
func (p Plumbing) Traced(t *CreateTrace) CreateOption {
	return func(o *createOptions) { o.trace = t }
}

// Written closes once a request of the create has been written to a server's
// connection, or else when Create returns (it failed before it wrote one). A
// request queued after that reaches the server after the create.
func (t *CreateTrace) Written() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.written == nil {
		t.written = make(chan struct{})
	}
	return t.written
}

// wrote is told that a request of the create was written (on go-zookeeper's
// writing goroutine), or that Create returns.
func (t *CreateTrace) wrote() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.written == nil {
		t.written = make(chan struct{})
	}
	if !t.sent {
		t.sent = true
		close(t.written)
	}
}

// traceWritten is a CreateTrace as the connection layer tells it that a create's
// request was written (wire.Written).
type traceWritten CreateTrace

func (t *traceWritten) Wrote() { (*CreateTrace)(t).wrote() }

// Czxid is the created node's czxid, the zxid of the create's reply (the server
// answers a write with the zxid of its transaction), once Create has returned it;
// 0 when no reply of the create was read (a node found by its protection id after a
// lost reply): then read the node.
func (t *CreateTrace) Czxid() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.czxid
}

// AnyoneReads says whether the ACL the create gave the node lets anyone read it
// (world:anyone has READ), once Create has returned. A server from 3.9.2 on delivers
// a notification only to a session that may read the node, and a setWatches, unlike
// a read, is not refused for lack of it (Plumbing.WatchDataSince): a watch set on a
// node that not anyone may read must be set with a read, whose refusal says that
// its notifications would never come.
func (t *CreateTrace) AnyoneReads() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.anyoneReads
}

// anyoneReads says whether acl lets anyone read its node.
func anyoneReads(acl []zk.ACL) bool {
	for _, a := range acl {
		if a.Scheme == "world" && a.ID == "anyone" && a.Perms&zk.PermRead != 0 {
			return true
		}
	}
	return false
}
