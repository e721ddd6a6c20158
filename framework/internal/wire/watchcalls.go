package wire

import (
	"slices"
	"sync"

	"github.com/go-zookeeper/zk"
)

// The framework's own one-shot data watches. A watch belongs to the connection
// that set it (doc.go), and go-zookeeper sets its own again on every new connection
// (SetWatches) because its callers expect a watch to last the session. A caller that
// reads again after any connection loss anyway (a lock's waiter, woken by every
// change of the client's state) needs no more than the connection's: GetW sets one
// with the framework's own getData, and WatchAndSetWatches with a setWatches and no
// read; their notifications are heard on the reader's goroutine, and their channels
// close when the connection ends. The notification
// still reaches go-zookeeper too, which hands it to the client's subscribers
// (Client.OnWatchEvent) and to no watcher of its own.
//
// Where the persistent watches hold the same path, a 3.8 server would let the
// one-shot watch replace the persistent one (doc.go): the persistent watch is added
// again right after, as after go-zookeeper's one-shot watches (Watches.afterOneShot),
// and a persistent watch removed from a 3.8 server leaves the path's watches alone
// while one of these is on it (Watches.removeAll).

// dataWatches are a connection's one-shot watches of the framework's own, by path:
// data watches, and child watches (the first listing of a lock whose waiters watch
// the children, sent with its create).
type dataWatches struct {
	mu     sync.Mutex
	byPath map[watchOn][]chan zk.Event
	asked  map[int32]askedWatch // the requests not answered yet, by xid
	ended  bool
}

// watchOn is what a watch is on: a path's data, or its children.
type watchOn struct {
	path  string
	child bool
}

type askedWatch struct {
	on    watchOn
	watch chan zk.Event
}

// add registers watch, a data or child watch on path asked by request xid; it
// reports false, registering nothing, once the connection has ended.
func (w *dataWatches) add(xid int32, path string, watch chan zk.Event, child bool) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended {
		return false
	}
	if w.asked == nil {
		w.byPath, w.asked = map[watchOn][]chan zk.Event{}, map[int32]askedWatch{}
	}
	on := watchOn{path, child}
	w.byPath[on] = append(w.byPath[on], watch)
	w.asked[xid] = askedWatch{on, watch}
	return true
}

// GetW reads path's data and sets a data watch on it, this connection's only: the
// event comes on the second channel, which closes without one if the connection
// ends first. A reply with an error (the node does not exist) sets no watch, and
// the channel then hears nothing.
func (t *Conn) GetW(path string) (<-chan Reply, <-chan zk.Event) {
	reply, watch, _ := t.GetWAndSetWatches(path, 0)
	return reply, watch
}

// GetWAndSetWatches is GetW on path and, in the same write, SetWatches on lasting
// as of since, whose reply comes on the third channel (nil if lasting is empty): a
// lock's waiter watches the node ahead with a read, which the server refuses if we
// may not read it (a server from 3.9.2 on would keep its notifications from us, and
// a setWatches is not refused for that), and its own node, which it made, with no
// read. The read's reply is handed out after the setWatches' (handOutAfter).
func (t *Conn) GetWAndSetWatches(path string, since int64, lasting ...string) (got <-chan Reply, watch <-chan zk.Event, set <-chan Reply) {
	ch := make(chan zk.Event, 1)
	p := newRequest(opcodeGetData, len(path)+5).str(path).bool(true)
	got, xid, ok := t.call(p)
	if !ok || !t.watches.add(xid, path, ch, false) {
		close(ch)
		return got, ch, closedReply(len(lasting) > 0) // closed, or closed when end() is done: nothing sent
	}
	ps, paths := [][]byte{p}, []string{path}
	if len(lasting) > 0 {
		var sp jute
		var setXid int32
		if set, sp, setXid = t.setWatches(since, lasting, lasting); sp != nil {
			ps, paths = append(ps, sp), append(paths, lasting...)
			t.handOutAfter(xid, setXid)
		}
	}
	t.h.cfg.Watches.sendOneShot(t, ps, paths...)
	return got, ch, set
}

// WatchAndSetWatches sets, with one setWatches request as of zxid since and no
// read, a data watch on path, this connection's only, as GetW's (its event comes on
// the channel), and data watches on lasting that last the session, as SetWatches':
// a lock's waiter watches the node ahead and its own node, which it made, in one
// request. path is watched so only where the caller knows that the server would let
// us read it (see SetWatches); its data must not have changed since since, or it
// notifies at once, as a node gone does, before the reply. The reply has no body; a
// refused request sets no watch, and the channel then hears nothing.
func (t *Conn) WatchAndSetWatches(path string, since int64, lasting ...string) (set <-chan Reply, watch <-chan zk.Event) {
	ch := make(chan zk.Event, 1)
	paths := append([]string{path}, lasting...)
	set, p, xid := t.setWatches(since, paths, lasting)
	if p == nil || !t.watches.add(xid, path, ch, false) {
		close(ch)
		return set, ch // closed, or closed when end() is done: nothing sent
	}
	t.h.cfg.Watches.sendOneShot(t, [][]byte{p}, paths...)
	return set, ch
}

// closedReply is a closed reply channel, if want; else nil.
func closedReply(want bool) <-chan Reply {
	if !want {
		return nil
	}
	ch := make(chan Reply)
	close(ch)
	return ch
}

// CreateThenList writes a create, as Create, and in the same write a listing of
// list's children, as Children, with a child watch of this connection's own if
// watch (its event comes on the third channel, as GetW's data watch's): the server
// answers the create first. A lock's create and first listing are so one round
// trip and one system call, and the create's reply is handed out after the
// listing's (handOutAfter). The listing's channel closes without a reply if the
// connection ends first, as the create's.
func (t *Conn) CreateThenList(path string, data []byte, acl []zk.ACL, flags int32, list string, watch bool) (created, listed <-chan Reply, children <-chan zk.Event) {
	cp := createRequest(path, data, acl, flags)
	created, createXid, createOK := t.call(cp)
	lp := newRequest(opcodeGetChildren2, len(list)+5).str(list).bool(watch)
	listed, xid, listOK := t.call(lp)
	ch := make(chan zk.Event, 1)
	if !watch || !listOK || !t.watches.add(xid, list, ch, true) {
		close(ch)
	}
	if !createOK || !listOK {
		return created, listed, ch // ended: the channels are closed, or closed when end() is done
	}
	var watched []string
	if watch {
		watched = []string{list}
	}
	t.handOutAfter(createXid, xid)
	t.h.cfg.Watches.sendOneShot(t, [][]byte{cp, lp}, watched...) // a failure ends the connection, and the channels
	return created, listed, ch
}

// SetWatches sets data watches on lasting that last the session (lasting.go), with
// one setWatches request as of zxid since: a node whose data changed after since,
// or that does not exist, notifies at once, before the reply, rather than being
// watched, so the caller must know each node as of since. The server checks no ACL
// for it, and one from 3.9.2 on delivers a node's notifications only to a session
// that may read the node: watch so only a node anyone may read. The reply has no
// body.
func (t *Conn) SetWatches(since int64, lasting ...string) <-chan Reply {
	reply, p, _ := t.setWatches(since, lasting, lasting)
	if p != nil {
		t.h.cfg.Watches.sendOneShot(t, [][]byte{p}, lasting...)
	}
	return reply
}

// setWatches numbers a setWatches request for data watches on paths and notes
// those of lasting (some of paths) as lasting the session; the caller sends it. A
// nil packet: the connection has ended, and the reply's channel is closed.
func (t *Conn) setWatches(since int64, paths, lasting []string) (<-chan Reply, jute, int32) {
	size := 20
	for _, p := range paths {
		size += 4 + len(p)
	}
	p := setWatchesBody(newRequest(opcodeSetWatches, size), since, paths)
	reply, xid, ok := t.call(p)
	if !ok {
		return reply, nil, 0
	}
	t.h.lasting.add(lasting)
	return reply, p, xid
}

// replied notes the reply to xid, before its caller has it: a failed request of
// ours set no watch.
func (w *dataWatches) replied(xid, code int32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	a, ok := w.asked[xid]
	if !ok {
		return
	}
	delete(w.asked, xid)
	if code == 0 {
		return
	}
	ws := slices.DeleteFunc(w.byPath[a.on], func(ch chan zk.Event) bool { return ch == a.watch })
	if len(ws) == 0 {
		delete(w.byPath, a.on)
	} else {
		w.byPath[a.on] = ws
	}
}

// fired hands a notification to the data watches it fires: a change of data or a
// deletion; on the reader's goroutine.
func (w *dataWatches) fired(typ zk.EventType, state int32, path string) {
	var ws []chan zk.Event
	w.mu.Lock()
	fire := func(on watchOn) {
		ws = append(ws, w.byPath[on]...)
		delete(w.byPath, on)
	}
	if typ == zk.EventNodeDataChanged || typ == zk.EventNodeDeleted {
		fire(watchOn{path, false})
	}
	if typ == zk.EventNodeChildrenChanged || typ == zk.EventNodeDeleted {
		fire(watchOn{path, true})
	}
	w.mu.Unlock()
	for _, ch := range ws {
		ch <- zk.Event{Type: typ, State: zk.State(state), Path: path}
	}
}

// on says whether a data watch of ours is on path.
func (w *dataWatches) on(path string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.byPath[watchOn{path, false}]) > 0 || len(w.byPath[watchOn{path, true}]) > 0
}

// end closes every watch's channel: the connection has ended, and its watches with it.
func (w *dataWatches) end() {
	w.mu.Lock()
	byPath := w.byPath
	w.byPath, w.asked, w.ended = nil, nil, true
	w.mu.Unlock()
	for _, ws := range byPath {
		for _, ch := range ws {
			close(ch)
		}
	}
}
