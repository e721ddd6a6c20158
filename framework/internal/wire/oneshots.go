package wire

import (
	"sync"

	"github.com/go-zookeeper/zk"
)

// oneShots follows the one-shot watches go-zookeeper keeps for a handle, from the
// packets it writes and reads, by its own rules (Conn.ExistsW, GetW, ChildrenW,
// notifyWatches, invalidateWatches): a watch is set by the successful reply to a
// read that asked for one (an exists that finds no node sets an existence watch),
// and dropped by the notification that fires it or by the session's end. Two things
// depend on knowing them exactly: whether go-zookeeper will send SetWatches on a new
// connection (replyhold.go), and whether removing a persistent watch from a 3.8
// server, which drops every watch of the path, would drop one of go-zookeeper's.
type oneShots struct {
	mu    sync.Mutex
	asked map[int32]oneShot // by xid: the connection's reads that set a watch if they succeed
	set   map[oneShot]struct{}
}

type oneShot struct {
	path string
	kind int8
}

const (
	watchData int8 = iota
	watchExist
	watchChild
)

// wrote notes a read that asks for a watch.
func (o *oneShots) wrote(xid, opcode int32, path string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.asked == nil {
		o.asked = map[int32]oneShot{}
	}
	kind := watchData
	if opcode == opcodeGetChildren || opcode == opcodeGetChildren2 {
		kind = watchChild
	}
	if opcode == opcodeExists {
		kind = watchExist // until the reply says whether the node exists
	}
	o.asked[xid] = oneShot{path, kind}
}

// replied notes go-zookeeper's reply to xid, with ZooKeeper's error code.
func (o *oneShots) replied(xid, code int32) {
	o.mu.Lock()
	defer o.mu.Unlock()
	w, ok := o.asked[xid]
	if !ok {
		return
	}
	delete(o.asked, xid)
	switch {
	case code == 0 && w.kind == watchExist:
		w.kind = watchData // an exists that found the node watches its data
	case code == codeNoNode && w.kind == watchExist:
	case code != 0:
		return
	}
	if o.set == nil {
		o.set = map[oneShot]struct{}{}
	}
	o.set[w] = struct{}{}
}

// fired notes a notification, as go-zookeeper's notifyWatches drops watches.
func (o *oneShots) fired(typ zk.EventType, path string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch typ {
	case zk.EventNodeCreated:
		delete(o.set, oneShot{path, watchExist})
	case zk.EventNodeDataChanged: // not the child watch: a child change fires that
		delete(o.set, oneShot{path, watchExist})
		delete(o.set, oneShot{path, watchData})
	case zk.EventNodeDeleted:
		delete(o.set, oneShot{path, watchExist})
		delete(o.set, oneShot{path, watchData})
		delete(o.set, oneShot{path, watchChild})
	case zk.EventNodeChildrenChanged:
		delete(o.set, oneShot{path, watchChild})
	}
}

// connected notes a new connection: reads asked on the last one were failed by
// go-zookeeper unanswered, and an expired session dropped every watch. It says
// whether go-zookeeper has watches to set again.
func (o *oneShots) connected(expired bool) (any bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.asked = nil
	if expired {
		o.set = nil
	}
	return len(o.set) > 0
}

// on says whether go-zookeeper has a watch on path.
func (o *oneShots) on(path string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, k := range []int8{watchData, watchExist, watchChild} {
		if _, ok := o.set[oneShot{path, k}]; ok {
			return true
		}
	}
	return false
}
