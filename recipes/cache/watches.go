package cache

import (
	"strings"

	"github.com/zkrecipes/zkrecipes/framework"
)

// The cache hears its watches through the client's OnWatchEvent, not through
// go-zookeeper's channel per watch: waiting on 20,000 channels took a goroutine per
// shard of them selecting by reflection, most of a cached node's heap and a handover
// on the loop for every watch set. go-zookeeper's channels are buffered and never
// read; it drops each one when its watch fires.
//
// A notification says every watch of its kind on the path has fired, whichever of
// the session's requests set it (the server keeps one per session, path and kind),
// so the cache keeps a flag per node and kind, not a count: armed, a watch is on the
// server and a notification will come; not armed, the next read sets one.

// heard takes a notification from go-zookeeper's goroutine to the loop, if it is
// about a node of the cached tree.
func (en *engine) heard(ev framework.Event) {
	p := ev.Path
	if en.path != "/" && p != en.path && !strings.HasPrefix(p, en.path+"/") {
		return
	}
	en.inbox.Push(func() { en.fired(p, ev.Type) })
}

// fired is a notification of the watches of the node at p, on the loop: those of the
// data (a data or existence watch), of the children, or (deleted, or the session's
// end) both.
func (en *engine) fired(p string, typ framework.EventType) {
	en.checkHistory()
	_, e := en.store.find(p)
	if e == nil {
		return // a node the cache no longer follows, or another recipe's watch
	}
	data, kids := true, true
	switch typ {
	case framework.EventNodeCreated, framework.EventNodeDataChanged:
		kids = false
	case framework.EventNodeChildrenChanged:
		data = false
	}
	if data {
		en.unarm(e, dataRead)
		en.refresh(e, dataRead)
	}
	if kids {
		en.unarm(e, childRead)
		if typ != framework.EventNodeDeleted && e.live && en.follows(e) {
			// A deleted node's data watch fired too, and its read will say so.
			en.refresh(e, childRead)
		}
	}
}

// unarm records that e's watch of kind k has fired. A read in flight may have set
// it again, or may be the one whose watch fired: its reply cannot tell, so the read
// after it sets one anew.
func (en *engine) unarm(e *entry, k readKind) {
	rs := &e.reads[k]
	rs.mark(armed, false)
	if rs.is(pending) {
		rs.mark(firedDuring, true)
	}
}
