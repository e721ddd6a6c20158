package wire

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-zookeeper/zk"
)

// Mode is what a persistent watch follows: ZooKeeper's addWatch modes.
type Mode int32

const (
	Persistent          Mode = 0 // one node, its data, existence and children
	PersistentRecursive Mode = 1 // a node and every node below it, no child-list events
)

// Event is a notification for a persistent watch, with the server's path. Reset,
// with Type zk.EventNotWatching and the watch's own path, says that the watch was
// set again on a new connection: what changed meanwhile may not have been heard.
type Event struct {
	Type  zk.EventType
	Path  string
	Zxid  int64 // the change's where the server sends it (3.9), else 0
	Reset bool
}

// Watch is one persistent watch of the client's.
type Watch struct {
	Path string // the server's
	Mode Mode
	// Deliver hears the watch's events on the reader's goroutine, and must not
	// block; End, that the watch has ended for good (Watches.Close, or a server
	// without persistent watches), once.
	Deliver func(Event)
	End     func()
}

// ErrUnsupported is Add's error once a server answered that it has no persistent
// watches (before ZooKeeper 3.6).
var ErrUnsupported = errors.New("wire: the server has no persistent watches")

// ErrEnded is Add's error once Close was called.
var ErrEnded = errors.New("wire: the persistent watches have ended")

// Watches are a client's persistent watches, one entry per server path, and the
// connection they are set on. Requests about them are written with mu held, so that
// they reach the server in the order their changes were made here.
type Watches struct {
	log         *slog.Logger
	mu          sync.Mutex
	paths       map[string]*watchedPath
	count       atomic.Int32           // len(paths), read without mu by every notification
	conn        *Conn                  // the last connection with a session, of handle
	handle      atomic.Pointer[Handle] // the handle followed (Follow); others are abandoned
	unsupported atomic.Bool            // a server has no persistent watches
	// untyped: the server removes watches only all at once per path (3.8); a
	// removal of a path with one-shot watches of go-zookeeper's is then skipped.
	untyped bool
	ended   bool // the client closed
}

// NewWatches makes a client's persistent watches, logging to log.
func NewWatches(log *slog.Logger) *Watches { return &Watches{log: log} }

// Follow makes h the handle whose connections the watches are set on and hear, from
// now on: a connection of an abandoned handle (a session given up, whose handle
// closes in the background) can still bring a connect response or a notification,
// which must not move the watches back to it nor reach them.
func (pw *Watches) Follow(h *Handle) { pw.handle.Store(h) }

// watchedPath is the client's watches of one server path: one server watch, of mode
// recursive if any of them is.
type watchedPath struct {
	watches []*Watch
	mode    Mode
}

// Unsupported says whether a server answered that it has no persistent watches.
func (pw *Watches) Unsupported() bool { return pw.unsupported.Load() }

// MarkUnsupported records a server's answer that it has no persistent watches
// (CodeUnimplemented): Add refuses from now on.
func (pw *Watches) MarkUnsupported() { pw.unsupported.Store(true) }

// Add registers w if it is not yet and sets its path's watch on the server, on the
// last connection with a session; it returns the channel of the server's answer,
// closed without one if the connection ends first.
func (pw *Watches) Add(w *Watch) (<-chan Reply, error) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if pw.ended {
		return nil, ErrEnded
	}
	if pw.unsupported.Load() {
		return nil, ErrUnsupported
	}
	e := pw.paths[w.Path]
	if e == nil {
		e = &watchedPath{mode: w.Mode}
		if pw.paths == nil {
			pw.paths = map[string]*watchedPath{}
		}
		pw.paths[w.Path] = e
		pw.count.Store(int32(len(pw.paths)))
	}
	if !slices.Contains(e.watches, w) {
		e.watches = append(e.watches, w)
	}
	widened := w.Mode == PersistentRecursive && e.mode != PersistentRecursive
	if widened {
		e.mode = PersistentRecursive
	}
	t := pw.live()
	if t == nil {
		return nil, ErrConnectionLost
	}
	ch := t.request(frame(0, opcodeAddWatch, addWatchBody(w.Path, e.mode)))
	if widened && !pw.untyped {
		// 3.9 keeps the persistent mode beside the recursive one: drop it, since the
		// recursive watch's events stand for it. 3.8 has replaced it already.
		_, _ = t.send(nil, t.ignored(opcodeRemoveWatches, jute(nil).str(w.Path).int(removePersistent)))
	}
	return ch, nil
}

func addWatchBody(path string, mode Mode) []byte {
	return jute(nil).str(path).int(int32(mode))
}

// Remove unregisters w, and removes its path's watch from the server once no watch
// is left on it, or narrows it once no recursive one is. It waits for the server's
// answer to a removal, until ctx ends.
func (pw *Watches) Remove(ctx context.Context, w *Watch) error {
	pw.mu.Lock()
	e := pw.paths[w.Path]
	if e == nil || !slices.Contains(e.watches, w) {
		pw.mu.Unlock()
		return nil
	}
	e.watches = slices.DeleteFunc(e.watches, func(x *Watch) bool { return x == w })
	t := pw.live()
	live := t != nil && !pw.ended
	if len(e.watches) == 0 {
		delete(pw.paths, w.Path)
		pw.count.Store(int32(len(pw.paths)))
	}
	var ch <-chan Reply
	switch {
	case !live:
	case len(e.watches) == 0:
		ch = pw.removeFromServer(t, w.Path, e.mode)
	case e.mode == PersistentRecursive && !slices.ContainsFunc(e.watches, (*Watch).recursive):
		e.mode = Persistent
		more := [][]byte{t.ignored(opcodeAddWatch, addWatchBody(w.Path, Persistent))}
		if !pw.untyped {
			more = append(more, t.ignored(opcodeRemoveWatches, jute(nil).str(w.Path).int(removePersistentRecursive)))
		}
		_, _ = t.send(nil, more...)
	}
	pw.mu.Unlock()
	if ch == nil {
		return nil
	}
	r, ok, err := waitReply(ctx, ch)
	if err != nil || !ok || r.Code == 0 || r.Code == codeNoWatcher {
		return err
	}
	// 3.8 knows no removal by mode: remove every watch of the path instead.
	pw.mu.Lock()
	pw.untyped = true
	ch = nil
	if pw.paths[w.Path] == nil && pw.conn == t {
		ch = pw.removeAll(t, w.Path)
	}
	pw.mu.Unlock()
	_, _, err = waitReply(ctx, ch)
	return err
}

// live is the connection to set watches on: the last with a session, of the handle
// followed; nil if there is none. pw.mu is held.
func (pw *Watches) live() *Conn {
	if t := pw.conn; t != nil && t.established.Load() && t.h == pw.handle.Load() {
		return t
	}
	return nil
}

// waitReply waits for a reply of the framework's own request, if ch is not nil.
func waitReply(ctx context.Context, ch <-chan Reply) (r Reply, ok bool, err error) {
	if ch == nil {
		return r, false, nil
	}
	select {
	case r, ok = <-ch:
		return r, ok, nil
	case <-ctx.Done():
		return r, false, ctx.Err()
	}
}

// removeFromServer sends the removal of path's watch of mode. pw.mu is held.
func (pw *Watches) removeFromServer(t *Conn, path string, mode Mode) <-chan Reply {
	if pw.untyped {
		return pw.removeAll(t, path)
	}
	typ := int32(removePersistent)
	if mode == PersistentRecursive {
		typ = removePersistentRecursive
	}
	return t.request(frame(0, opcodeRemoveWatches, jute(nil).str(path).int(typ)))
}

// removeAll sends the removal of every watch of path, on a server that removes no
// other way (3.8), unless go-zookeeper or the framework (watchcalls.go) has a
// one-shot watch there that it would drop unheard: the persistent watch then stays
// on the server until the connection ends, and its events reach no one (nil:
// nothing sent). pw.mu is held.
func (pw *Watches) removeAll(t *Conn, path string) <-chan Reply {
	if t.h.oneShots.on(path) || t.watches.on(path) || t.h.lasting.on(path) {
		return nil
	}
	return t.request(frame(0, opcodeRemoveWatches, jute(nil).str(path).int(removeAny)))
}

func (w *Watch) recursive() bool { return w.Mode == PersistentRecursive }

// connected sets every watch again on a new connection with a session, on its
// reader's goroutine right after the connect response, before any notification can
// come on it, and tells each watch so (Reset). SetWatches2 replays nothing for
// persistent watches, so the followers read again.
func (pw *Watches) connected(t *Conn) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if pw.handle.Load() != t.h {
		return
	}
	pw.conn = t
	if len(pw.paths) == 0 || pw.ended {
		return
	}
	var persistent, recursive []string
	for p, e := range pw.paths {
		if e.mode == PersistentRecursive {
			recursive = append(recursive, p)
		} else {
			persistent = append(persistent, p)
		}
	}
	for _, body := range setWatches2Bodies(persistent, recursive) {
		ch := t.request(frame(0, opcodeSetWatches2, body))
		go pw.checkSetAgain(t, ch)
	}
	for p, e := range pw.paths {
		for _, w := range e.watches {
			w.Deliver(Event{Type: zk.EventNotWatching, Path: p, Reset: true})
		}
	}
}

// checkSetAgain reads the answer to a SetWatches2 on t. Only a server without
// persistent watches (a rolling downgrade to 3.5: CodeUnimplemented) ends them,
// which the recipes see as their watch ending. Any other refusal (a server that
// wanted credentials first, say) is of this connection: it is dropped, and the next
// sets the watches again, with a Reset.
func (pw *Watches) checkSetAgain(t *Conn, ch <-chan Reply) {
	r, ok := <-ch
	switch {
	case !ok || r.Code == 0:
	case r.Code == CodeUnimplemented:
		pw.log.Error("zkrecipes: the server has no persistent watches; they end", "server", t.addr)
		pw.unsupported.Store(true)
		pw.endAll()
	default:
		pw.log.Warn("zkrecipes: the server refused to set the persistent watches again; dropping the connection",
			"server", t.addr, "code", r.Code)
		_ = t.Conn.Close()
	}
}

// setWatches2Limit bounds one SetWatches2 request, as the Java client bounds its own:
// well under the server's default jute.maxbuffer (1 MiB).
const setWatches2Limit = 128 << 10

// setWatches2Bodies are the SetWatches2 requests that set the persistent and
// recursive watches again: relative zxid (unused by either), then the data, exist,
// child, persistent and recursive paths.
func setWatches2Bodies(persistent, recursive []string) [][]byte {
	var bodies [][]byte
	for len(persistent)+len(recursive) > 0 {
		size := 0
		p := takeUnderLimit(&persistent, &size)
		r := takeUnderLimit(&recursive, &size)
		bodies = append(bodies, jute(nil).long(0).strs(nil).strs(nil).strs(nil).strs(p).strs(r))
	}
	return bodies
}

// takeUnderLimit takes paths from the front of *paths while a request of *size
// bytes of paths so far stays under setWatches2Limit with them (one at least, into
// an empty request), and counts them into *size.
func takeUnderLimit(paths *[]string, size *int) []string {
	n := 0
	for n < len(*paths) && (*size == 0 || *size+4+len((*paths)[n]) <= setWatches2Limit) {
		*size += 4 + len((*paths)[n])
		n++
	}
	taken := (*paths)[:n]
	*paths = (*paths)[n:]
	return taken
}

// notify hands a notification to the watches it is for, on the reader's goroutine:
// a recursive watch on the path or above it hears all but child-list events; a
// persistent one hears its own path's, and, while its path's server watch is
// recursive, a child-list event made of a child's creation or deletion.
func (pw *Watches) notify(from *Handle, typ zk.EventType, path string, zxid int64) {
	if pw.count.Load() == 0 || pw.handle.Load() != from {
		return
	}
	if zxid < 0 {
		zxid = 0 // 3.8 sends -1
	}
	pw.mu.Lock()
	defer pw.mu.Unlock()
	for p := path; ; p = parentPath(p) {
		if e := pw.paths[p]; e != nil {
			for _, w := range e.watches {
				if ev, ok := e.event(w, typ, path, p, zxid); ok {
					w.Deliver(ev)
				}
			}
		}
		if p == "/" {
			return
		}
	}
}

// parentPath is p's parent: "/a/b" → "/a", "/a" → "/".
func parentPath(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

// event is what w, a watch of e on path at, hears of a notification about path.
func (e *watchedPath) event(w *Watch, typ zk.EventType, path, at string, zxid int64) (Event, bool) {
	ev := Event{Type: typ, Path: path, Zxid: zxid}
	switch {
	case w.Mode == PersistentRecursive:
		return ev, typ != zk.EventNodeChildrenChanged
	case path == at:
		return ev, e.mode == Persistent || typ != zk.EventNodeChildrenChanged
	case e.mode == PersistentRecursive && parentPath(path) == at &&
		(typ == zk.EventNodeCreated || typ == zk.EventNodeDeleted):
		return Event{Type: zk.EventNodeChildrenChanged, Path: at, Zxid: zxid}, true
	}
	return ev, false
}

// afterOneShot writes a packet of go-zookeeper's that sets one-shot watches (a read
// with a watch on path, or SetWatches), then sets again the persistent watch of
// each path it names: on 3.8 the one-shot watch replaced it.
func (pw *Watches) afterOneShot(t *Conn, b []byte, path string, opcode int32) (int, error) {
	if pw.count.Load() == 0 || pw.handle.Load() != t.h {
		return t.send(b)
	}
	pw.mu.Lock()
	defer pw.mu.Unlock()
	paths := []string{path}
	if opcode == opcodeSetWatches {
		paths = setWatchesPaths(b)
	}
	var more [][]byte
	for _, p := range paths {
		if e := pw.paths[p]; e != nil {
			more = append(more, t.ignored(opcodeAddWatch, addWatchBody(p, e.mode)))
		}
	}
	return t.send(b, more...)
}

// Close ends every watch for good: the client closed.
// sendOneShot sends ps, the framework's own requests that set one-shot watches on
// paths (watchcalls.go: none, for a batch that sets no watch), and after them, where
// a persistent watch is on one of the paths, what keeps it on a 3.8 server, as
// afterOneShot does for go-zookeeper's.
func (pw *Watches) sendOneShot(t *Conn, ps [][]byte, paths ...string) {
	if len(paths) == 0 || pw.handle.Load() != t.h {
		_, _ = t.send(nil, ps...)
		return
	}
	// Under the lock even with no persistent watch: a removal of the last one sends,
	// under it, a 3.8 removal of every watch of its path unless one of ours is on it
	// (removeAll); a watch of ours registered after that check is then written
	// after the removal, not before it, where the removal would drop it unheard.
	pw.mu.Lock()
	defer pw.mu.Unlock()
	for _, path := range paths {
		if e := pw.paths[path]; e != nil {
			ps = append(ps, t.ignored(opcodeAddWatch, addWatchBody(path, e.mode)))
		}
	}
	_, _ = t.send(nil, ps...)
}

func (pw *Watches) Close() {
	pw.mu.Lock()
	pw.ended = true
	pw.mu.Unlock()
	pw.endAll()
}

// endAll ends every watch: the client closed, or the server cannot keep them.
func (pw *Watches) endAll() {
	pw.mu.Lock()
	var all []*Watch
	for _, e := range pw.paths {
		all = append(all, e.watches...)
	}
	pw.paths = nil
	pw.count.Store(0)
	pw.mu.Unlock()
	for _, w := range all {
		w.End()
	}
}
