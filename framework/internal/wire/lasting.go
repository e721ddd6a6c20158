package wire

import (
	"sync"

	"github.com/go-zookeeper/zk"
)

// The framework's own data watches that last the session: a lock holder's on its
// own node, which must hear the node's deletion for as long as the hold lives, across
// connections. go-zookeeper keeps such watches by setting them again on every new
// connection (SetWatches, as of the last zxid it read), so that a change or deletion
// made meanwhile notifies at once; these are kept the same way, by the handle, and
// set with the framework's own setWatches (Conn.SetWatches), or with a waiter's
// watch on the node ahead in the same request (Conn.WatchAndSetWatches). Their notifications reach go-zookeeper,
// which hands them to the client's subscribers (Client.OnWatchEvent) and to no
// watcher of its own: nothing here waits on a channel.
//
// A watch is dropped by the notification that fires it (a change of data or a
// deletion: the server's one data watch of the path on the connection, however many
// asked for it) and by the session's end. One set as of a zxid whose node changed
// since, or is gone, fires at once; like any notification, it reaches everything of
// the client's that listens on the path (go-zookeeper's watchers, the subscribers,
// the persistent watches).
type lastingWatches struct {
	mu    sync.Mutex
	paths map[string]struct{}
}

// add notes a watch on path, before the request that sets it is written.
func (w *lastingWatches) add(paths []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.paths == nil {
		w.paths = map[string]struct{}{}
	}
	for _, p := range paths {
		w.paths[p] = struct{}{}
	}
}

// fired notes a notification, on the reader's goroutine.
func (w *lastingWatches) fired(typ zk.EventType, path string) {
	if typ != zk.EventNodeDataChanged && typ != zk.EventNodeDeleted {
		return
	}
	w.mu.Lock()
	delete(w.paths, path)
	w.mu.Unlock()
}

// expired drops every watch: their session has ended.
func (w *lastingWatches) expired() {
	w.mu.Lock()
	w.paths = nil
	w.mu.Unlock()
}

// all returns the paths watched, to watch again on a new connection.
func (w *lastingWatches) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	paths := make([]string, 0, len(w.paths))
	for p := range w.paths {
		paths = append(paths, p)
	}
	return paths
}

// on says whether a lasting watch is on path.
func (w *lastingWatches) on(path string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.paths[path]
	return ok
}

// setAgain sets the lasting watches again on t, a new connection of their session,
// as of the last zxid the client read (go-zookeeper's, which the server has
// checked against its own). On the reader's goroutine, right after the connect
// response: the requests wait behind the gate. A refusal drops the connection, and
// the next one sets them again.
func (w *lastingWatches) setAgain(t *Conn) {
	paths := w.all()
	p := t.h.lastZxid.Load()
	if len(paths) == 0 || p == nil {
		return
	}
	since := *p
	for _, body := range setWatchesBodies(since, paths) {
		ch := t.request(frame(0, opcodeSetWatches, body))
		go func() {
			if r, ok := <-ch; ok && r.Code != 0 {
				t.h.cfg.Log.Warn("zkrecipes: the server refused to set the holders' watches again; dropping the connection",
					"server", t.addr, "code", r.Code)
				_ = t.Conn.Close()
			}
		}()
	}
}

// setWatchesBodies are the setWatches requests (relative zxid, then the data, exist
// and child watches' paths) that set data watches on paths as of since, each under
// setWatches2Limit.
func setWatchesBodies(since int64, paths []string) [][]byte {
	var bodies [][]byte
	for len(paths) > 0 {
		size := 0
		bodies = append(bodies, setWatchesBody(nil, since, takeUnderLimit(&paths, &size)))
	}
	return bodies
}

// setWatchesBody appends to j the body of a setWatches request that sets data
// watches on paths as of since.
func setWatchesBody(j jute, since int64, paths []string) jute {
	return j.long(since).strs(paths).strs(nil).strs(nil)
}
