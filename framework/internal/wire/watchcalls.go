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
// with the framework's own getData, whose notification it hears on the reader's
// goroutine, and whose channel closes when the connection ends. The notification
// still reaches go-zookeeper too, which hands it to the client's subscribers
// (Client.OnWatchEvent) and to no watcher of its own.
//
// Where the persistent watches hold the same path, a 3.8 server would let the
// one-shot watch replace the persistent one (doc.go): the persistent watch is added
// again right after, as after go-zookeeper's one-shot watches (Watches.afterOneShot),
// and a persistent watch removed from a 3.8 server leaves the path's watches alone
// while one of these is on it (Watches.removeAll).

// dataWatches are a connection's data watches of the framework's own, by path.
type dataWatches struct {
	mu     sync.Mutex
	byPath map[string][]chan zk.Event
	asked  map[int32]askedWatch // the getData requests not answered yet, by xid
	ended  bool
}

type askedWatch struct {
	path  string
	watch chan zk.Event
}

// GetW reads path's data and sets a data watch on it, this connection's only: the
// event comes on the second channel, which closes without one if the connection
// ends first. A reply with an error (the node does not exist) sets no watch, and
// the channel then hears nothing.
func (t *Conn) GetW(path string) (<-chan Reply, <-chan zk.Event) {
	watch := make(chan zk.Event, 1)
	p := newRequest(opcodeGetData, len(path)+5).str(path).bool(true)
	reply, xid, ok := t.call(p)
	ours := &t.watches
	ours.mu.Lock()
	if !ok || ours.ended {
		ours.mu.Unlock()
		close(watch)
		return reply, watch // closed, or closed when end() is done: nothing sent
	}
	if ours.byPath == nil {
		ours.byPath, ours.asked = map[string][]chan zk.Event{}, map[int32]askedWatch{}
	}
	ours.byPath[path] = append(ours.byPath[path], watch)
	ours.asked[xid] = askedWatch{path, watch}
	ours.mu.Unlock()
	t.h.cfg.Watches.sendOneShot(t, p, path)
	return reply, watch
}

// SetWatches sets data watches with one setWatches request, as of zxid since: a
// watch of this connection's on path, as GetW's (its event comes on the second
// channel, which closes without one if the connection ends first), unless path is
// "", and one on each of lasting that lasts the session (lasting.go). A node whose
// data changed after since, or that does not exist, notifies at once, before the
// reply, rather than being watched: the caller must know each node as of since. The
// reply has no body; one with an error sets no watch of this connection's.
func (t *Conn) SetWatches(since int64, path string, lasting ...string) (<-chan Reply, <-chan zk.Event) {
	watch := make(chan zk.Event, 1)
	paths := lasting
	if path != "" {
		paths = append([]string{path}, lasting...)
	}
	size := 20
	for _, p := range paths {
		size += 4 + len(p)
	}
	p := newRequest(opcodeSetWatches, size).long(since).strs(paths).strs(nil).strs(nil)
	reply, xid, ok := t.call(p)
	ours := &t.watches
	ours.mu.Lock()
	if !ok || ours.ended {
		ours.mu.Unlock()
		close(watch)
		return reply, watch
	}
	if path != "" {
		if ours.byPath == nil {
			ours.byPath, ours.asked = map[string][]chan zk.Event{}, map[int32]askedWatch{}
		}
		ours.byPath[path] = append(ours.byPath[path], watch)
		ours.asked[xid] = askedWatch{path, watch}
	} else {
		close(watch)
	}
	ours.mu.Unlock()
	t.h.lasting.add(lasting)
	t.h.cfg.Watches.sendOneShot(t, p, paths...)
	return reply, watch
}

// replied notes the reply to xid, before its caller has it: a failed getData of
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
	ws := slices.DeleteFunc(w.byPath[a.path], func(ch chan zk.Event) bool { return ch == a.watch })
	if len(ws) == 0 {
		delete(w.byPath, a.path)
	} else {
		w.byPath[a.path] = ws
	}
}

// fired hands a notification to the data watches it fires: a change of data or a
// deletion; on the reader's goroutine.
func (w *dataWatches) fired(typ zk.EventType, state int32, path string) {
	if typ != zk.EventNodeDataChanged && typ != zk.EventNodeDeleted {
		return
	}
	w.mu.Lock()
	ws := w.byPath[path]
	delete(w.byPath, path)
	w.mu.Unlock()
	for _, ch := range ws {
		ch <- zk.Event{Type: typ, State: zk.State(state), Path: path}
	}
}

// on says whether a data watch of ours is on path.
func (w *dataWatches) on(path string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.byPath[path]) > 0
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
