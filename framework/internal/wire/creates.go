package wire

import (
	"sync"
	"sync/atomic"
)

// Creates follows go-zookeeper's creates of given paths, for a caller that must
// know two things no reply of go-zookeeper's API says: when the create's request
// has been written (go-zookeeper writes its requests in the order they were queued,
// and the server answers a session's requests in that order, so a request queued
// after that moment reaches the server after the create), and the zxid of the
// create's reply, which is the zxid of the transaction that made the node: its
// czxid (the server applies a session's writes one at a time, and answers each
// with the last zxid it applied).
//
// Only a path no two creates share may be followed (a protected create's, whose
// name holds a unique id): the reply is matched to the path through the xid of
// the request written last for it.
type Creates struct {
	n      atomic.Int32 // how many paths are followed: none, and a write looks up nothing
	mu     sync.Mutex
	byPath map[string]*Create
	byXid  map[int32]*Create
}

// Create is one followed path's creates: every attempt at it (a retry, the create
// again once its parents are made).
type Create struct {
	path    string
	written Written
	once    sync.Once
	zxid    atomic.Int64
}

// Written hears that a followed create's request has been written (Creates.Follow).
// An interface, not a func: a caller's method value would cost an allocation on
// every create followed (every lock's acquisition).
type Written interface{ Wrote() }

// Follow starts following the creates of path, and calls written.Wrote once the
// first of them has been written, on go-zookeeper's writing goroutine (it must not
// block); Stop ends it.
func (cs *Creates) Follow(path string, written Written) *Create {
	c := &Create{path: path, written: written}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.byPath == nil {
		cs.byPath, cs.byXid = map[string]*Create{}, map[int32]*Create{}
	}
	cs.byPath[path] = c
	cs.n.Add(1)
	return c
}

// Stop stops following c.
func (cs *Creates) Stop(c *Create) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.byPath[c.path] != c {
		return
	}
	delete(cs.byPath, c.path)
	for xid, other := range cs.byXid {
		if other == c {
			delete(cs.byXid, xid)
		}
	}
	cs.n.Add(-1)
}

// Zxid is the zxid of the last successful create's reply: the node's czxid; 0
// when no reply of a successful create was read.
func (c *Create) Zxid() int64 { return c.zxid.Load() }

// writing notes a create request xid, packet p, about to be written: before the
// write, since its reply may be read before the write returns. Its Wrote, once
// written, returns the follow's (nil: none).
func (cs *Creates) writing(xid int32, p []byte) *Create {
	if cs == nil || cs.n.Load() == 0 {
		return nil
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c := cs.byPath[string(createPath(p))]
	if c != nil {
		cs.byXid[xid] = c
	}
	return c
}

// wrote says that c's create request has been written (nil: none followed).
func (c *Create) wrote() {
	if c != nil {
		c.once.Do(c.written.Wrote)
	}
}

// replied notes go-zookeeper's reply to xid, with its header's zxid and code.
func (cs *Creates) replied(xid int32, zxid int64, code int32) {
	if cs == nil || cs.n.Load() == 0 {
		return
	}
	cs.mu.Lock()
	c := cs.byXid[xid]
	delete(cs.byXid, xid)
	cs.mu.Unlock()
	if c != nil && code == 0 {
		c.zxid.Store(zxid)
	}
}
