package framework

import (
	"sync"

	"github.com/go-zookeeper/zk"
)

// CreateTrace is what a recipe learns of a protected create that Create's result
// does not say (Plumbing.Traced). Its zero value is ready; one trace serves one
// Create.
//
// A lock's queue sends its listing with its create, so that an acquisition that
// meets no one takes one round trip. Sent from two goroutines, the listing could
// reach the server first and lack our node; sent once the create's request has been
// written (Written), it reaches the server after it: go-zookeeper writes its
// requests in the order they were queued, and the server answers a session's
// requests in order. And the node's czxid (Czxid) is read off the create's reply,
// so that a fencing token needs no read of the node before the grant.
type CreateTrace struct {
	mu      sync.Mutex
	written chan struct{}
	sent    bool
	czxid   int64 // set when Create returns
	// whether the node's ACL lets anyone read it, set when Create returns
	anyoneReads bool
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
