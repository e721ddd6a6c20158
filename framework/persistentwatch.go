package framework

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/zkrecipes/zkrecipes/internal/notify"
)

// WatchMode is what a persistent watch follows (AddWatch), as ZooKeeper 3.6 and later
// define it.
type WatchMode int32

const (
	// WatchPersistent follows one node: its data changing, its creation and
	// deletion, and its children coming and going (EventNodeChildrenChanged).
	WatchPersistent WatchMode = 0
	// WatchPersistentRecursive follows a node and every node below it: their data,
	// creation and deletion, and no child-list events (a child's creation is its
	// own EventNodeCreated).
	WatchPersistentRecursive WatchMode = 1
)

func (m WatchMode) String() string {
	switch m {
	case WatchPersistent:
		return "persistent"
	case WatchPersistentRecursive:
		return "persistent recursive"
	}
	return fmt.Sprintf("WatchMode(%d)", int32(m))
}

// WatchEvent is a notification of a persistent watch. Path is relative to the
// client's namespace. Zxid is the zxid of the change that fired it where the server
// sends one (ZooKeeper 3.9 does, 3.8 does not), else 0.
//
// Reset is true, with Type EventNotWatching and the watch's own Path, after the
// connection was lost, in the same session or in a new one after an expiry: the
// watch has been set again, and what changed meanwhile may not have been heard, so
// a follower reads again. It comes before any later notification.
type WatchEvent struct {
	Type  EventType
	Path  string
	Zxid  int64
	Reset bool
}

// ErrPersistentWatchUnsupported is AddWatch's error when the server has no
// persistent watches (ZooKeeper before 3.6), or the client was made
// WithOneShotWatches: the recipes then follow state with one-shot watches.
var ErrPersistentWatchUnsupported = errors.New("framework: the server has no persistent watches (ZooKeeper 3.6 or later has them)")

// PersistentWatch is a watch that stays set until it is closed: see AddWatch.
type PersistentWatch struct {
	c       *Client
	path    string // the server's
	mode    WatchMode
	deliver func(WatchEvent) // on go-zookeeper's receiving goroutine; must not block

	// The channel of AddWatch's watches: a queue, so that delivery never blocks
	// the receiving goroutine, emptied into events by a goroutine of the watch's.
	queue  *notify.Queue[WatchEvent]
	events chan WatchEvent
	pump   sync.WaitGroup

	done    chan struct{} // closed once the watch ends
	endOnce sync.Once
}

// AddWatch sets a persistent watch on path (ZooKeeper's addWatch): every change it
// follows (see WatchMode) is a WatchEvent on Events, in the server's order, until
// Close or the client's close. The watch is set again by itself after any
// connection loss, and an event with Reset true then says so.
//
// AddWatch returns once the server has the watch, retrying as the client's node
// operations do. Bad input is an error at once: a bad path, an unknown mode, a
// closed client (ErrClosed). A server without persistent watches, or a client made
// WithOneShotWatches, gives ErrPersistentWatchUnsupported.
//
// Watches of one client on one path share one watch on the server (ZooKeeper keeps
// one per path and connection), of the widest mode asked for; each hears what its
// own mode follows.
func (c *Client) AddWatch(ctx context.Context, path string, mode WatchMode) (*PersistentWatch, error) {
	w := &PersistentWatch{queue: notify.NewQueue[WatchEvent](), events: make(chan WatchEvent)}
	w.deliver = w.queue.Push
	if err := c.addWatch(ctx, w, path, mode); err != nil {
		return nil, err
	}
	w.pump.Add(1)
	go w.pumpEvents()
	return w, nil
}

// AddWatchFunc is AddWatch for recipes (see Plumbing): fn hears each event on
// go-zookeeper's receiving goroutine, and must return at once (hand the event on,
// never block or call the client). The watch has no Events channel.
func (p Plumbing) AddWatchFunc(ctx context.Context, c *Client, path string, mode WatchMode, fn func(WatchEvent)) (*PersistentWatch, error) {
	if fn == nil {
		return nil, invalidOption("nil event function")
	}
	w := &PersistentWatch{deliver: fn}
	if err := c.addWatch(ctx, w, path, mode); err != nil {
		return nil, err
	}
	return w, nil
}

// Events delivers the watch's events. It is closed once the watch ends: its Close,
// or the client's. It is nil for a watch made by AddWatchFunc.
func (w *PersistentWatch) Events() <-chan WatchEvent { return w.events }

// Close removes the watch, and from the server once no other watch of the client is
// on its path. ctx bounds the wait for the server's answer; the watch ends at once
// either way (a watch left on the server by a connection lost meanwhile is not set
// again). A second Close returns nil.
func (w *PersistentWatch) Close(ctx context.Context) error {
	ended := false
	w.endOnce.Do(func() { ended = true; w.stop() })
	if !ended {
		return nil
	}
	return w.c.watches.remove(ctx, w)
}

func (w *PersistentWatch) stop() {
	close(w.done)
	w.pump.Wait()
}

func (w *PersistentWatch) pumpEvents() {
	defer w.pump.Done()
	defer close(w.events)
	for {
		ev, ok := w.queue.Pop(w.done)
		if !ok {
			return
		}
		select {
		case w.events <- ev:
		case <-w.done:
			return
		}
	}
}

// addWatch validates and sets w, retried.
func (c *Client) addWatch(ctx context.Context, w *PersistentWatch, path string, mode WatchMode) error {
	if mode != WatchPersistent && mode != WatchPersistentRecursive {
		return invalidOption("unknown watch mode %d", int32(mode))
	}
	sp, err := c.fix(path, false)
	if err != nil {
		return err
	}
	if c.closing.Err() != nil {
		return ErrClosed
	}
	if c.opts.oneShotWatches {
		return fmt.Errorf("add watch on %s: %w (WithOneShotWatches)", path, ErrPersistentWatchUnsupported)
	}
	w.c, w.path, w.mode, w.done = c, sp, mode, make(chan struct{})
	pw := c.watches
	err = c.retry(ctx, opAddWatch, func(ctx context.Context) error {
		if _, err := c.connection(ctx, false); err != nil {
			return err
		}
		ch, err := pw.add(w)
		if err != nil {
			return err
		}
		select {
		case r, ok := <-ch:
			switch {
			case !ok:
				return errConnectionLost
			case r.code == codeUnimplemented:
				pw.unsupported.Store(true)
				return fmt.Errorf("add watch on %s: %w", path, ErrPersistentWatchUnsupported)
			case r.code != 0:
				return fmt.Errorf("framework: add watch on %s: the server answered with error code %d", path, r.code)
			}
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-c.closing.Done():
			return ErrClosed
		}
	})
	if err != nil {
		w.endOnce.Do(func() { close(w.done) })
		_ = pw.remove(doneContext, w) // unregisters; a removal is not waited for
		return err
	}
	return nil
}

// doneContext has ended: a wait bounded by it does not wait.
var doneContext = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// persistentWatches are a client's persistent watches, one entry per server path,
// and the connection they are set on. Requests about them are written with mu held,
// so that they reach the server in the order their changes were made here.
type persistentWatches struct {
	c           *core
	mu          sync.Mutex
	paths       map[string]*watchedPath
	count       atomic.Int32 // len(paths), read without mu by every notification
	conn        *trackedConn // the last connection with a session
	unsupported atomic.Bool  // a server has no persistent watches
	// untyped: the server removes watches only all at once per path (3.8); a
	// removal of a path with one-shot watches of go-zookeeper's is then skipped.
	untyped bool
	ended   bool // the client closed
}

// watchedPath is the client's watches of one server path: one server watch, of mode
// recursive if any of them is.
type watchedPath struct {
	watches []*PersistentWatch
	mode    WatchMode
}

// add registers w if it is not yet and sets its path's watch on the server, on the
// last connection with a session; it returns the channel of the server's answer.
func (pw *persistentWatches) add(w *PersistentWatch) (<-chan wireReply, error) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if pw.ended {
		return nil, ErrClosed
	}
	if pw.unsupported.Load() {
		return nil, fmt.Errorf("add watch on %s: %w", w.path, ErrPersistentWatchUnsupported)
	}
	e := pw.paths[w.path]
	if e == nil {
		e = &watchedPath{mode: w.mode}
		if pw.paths == nil {
			pw.paths = map[string]*watchedPath{}
		}
		pw.paths[w.path] = e
		pw.count.Store(int32(len(pw.paths)))
	}
	if !slices.Contains(e.watches, w) {
		e.watches = append(e.watches, w)
	}
	widened := w.mode == WatchPersistentRecursive && e.mode != WatchPersistentRecursive
	if widened {
		e.mode = WatchPersistentRecursive
	}
	t := pw.conn
	if t == nil || !t.established.Load() {
		return nil, errConnectionLost
	}
	ch := t.request(opcodeAddWatch, addWatchBody(w.path, e.mode))
	if widened && !pw.untyped {
		// 3.9 keeps the persistent mode beside the recursive one: drop it, since the
		// recursive watch's events stand for it. 3.8 has replaced it already.
		_, _ = t.send(nil, t.ignored(opcodeRemoveWatches, jute(nil).str(w.path).int(removePersistent)))
	}
	return ch, nil
}

func addWatchBody(path string, mode WatchMode) []byte {
	return jute(nil).str(path).int(int32(mode))
}

// remove unregisters w, and removes its path's watch from the server once no watch
// is left on it, or narrows it once no recursive one is. It waits for the server's
// answer to a removal, until ctx ends.
func (pw *persistentWatches) remove(ctx context.Context, w *PersistentWatch) error {
	pw.mu.Lock()
	e := pw.paths[w.path]
	if e == nil || !slices.Contains(e.watches, w) {
		pw.mu.Unlock()
		return nil
	}
	e.watches = slices.DeleteFunc(e.watches, func(x *PersistentWatch) bool { return x == w })
	t := pw.conn
	live := t != nil && t.established.Load() && !pw.ended
	if len(e.watches) == 0 {
		delete(pw.paths, w.path)
		pw.count.Store(int32(len(pw.paths)))
	}
	var ch <-chan wireReply
	switch {
	case !live:
	case len(e.watches) == 0:
		ch = pw.removeFromServer(t, w.path, e.mode)
	case e.mode == WatchPersistentRecursive && !slices.ContainsFunc(e.watches, (*PersistentWatch).recursive):
		e.mode = WatchPersistent
		more := [][]byte{t.ignored(opcodeAddWatch, addWatchBody(w.path, WatchPersistent))}
		if !pw.untyped {
			more = append(more, t.ignored(opcodeRemoveWatches, jute(nil).str(w.path).int(removePersistentRecursive)))
		}
		_, _ = t.send(nil, more...)
	}
	pw.mu.Unlock()
	if ch == nil {
		return nil
	}
	r, ok, err := waitReply(ctx, ch)
	if err != nil || !ok || r.code == 0 || r.code == codeNoWatcher {
		return err
	}
	// 3.8 knows no removal by mode: remove every watch of the path instead.
	pw.mu.Lock()
	pw.untyped = true
	ch = nil
	if pw.paths[w.path] == nil && pw.conn == t {
		ch = pw.removeAll(t, w.path)
	}
	pw.mu.Unlock()
	_, _, err = waitReply(ctx, ch)
	return err
}

// waitReply waits for a reply of the framework's own request, if ch is not nil.
func waitReply(ctx context.Context, ch <-chan wireReply) (r wireReply, ok bool, err error) {
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
func (pw *persistentWatches) removeFromServer(t *trackedConn, path string, mode WatchMode) <-chan wireReply {
	if pw.untyped {
		return pw.removeAll(t, path)
	}
	typ := int32(removePersistent)
	if mode == WatchPersistentRecursive {
		typ = removePersistentRecursive
	}
	return t.request(opcodeRemoveWatches, jute(nil).str(path).int(typ))
}

// removeAll sends the removal of every watch of path, on a server that removes no
// other way (3.8), unless go-zookeeper has a one-shot watch there that it would
// drop unheard: the persistent watch then stays on the server until the connection
// ends, and its events reach no one (nil: nothing sent). pw.mu is held.
func (pw *persistentWatches) removeAll(t *trackedConn, path string) <-chan wireReply {
	if t.h.oneShots.on(path) {
		return nil
	}
	return t.request(opcodeRemoveWatches, jute(nil).str(path).int(removeAny))
}

func (w *PersistentWatch) recursive() bool { return w.mode == WatchPersistentRecursive }

// connected sets every watch again on a new connection with a session, on its
// reader's goroutine right after the connect response, before any notification can
// come on it, and tells each watch so (Reset). SetWatches2 replays nothing for
// persistent watches, so the followers read again.
func (pw *persistentWatches) connected(t *trackedConn) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	pw.conn = t
	if len(pw.paths) == 0 || pw.ended {
		return
	}
	var persistent, recursive []string
	for p, e := range pw.paths {
		if e.mode == WatchPersistentRecursive {
			recursive = append(recursive, p)
		} else {
			persistent = append(persistent, p)
		}
	}
	for _, body := range setWatches2Bodies(persistent, recursive) {
		ch := t.request(opcodeSetWatches2, body)
		go pw.checkSetAgain(ch)
	}
	for _, e := range pw.paths {
		for _, w := range e.watches {
			w.deliver(WatchEvent{Type: EventNotWatching, Path: w.c.unfix(w.path), Reset: true})
		}
	}
}

// checkSetAgain reads the answer to a SetWatches2: a server without persistent
// watches (a rolling downgrade to 3.5) ends them all, which the recipes see as their
// watch ending.
func (pw *persistentWatches) checkSetAgain(ch <-chan wireReply) {
	r, ok := <-ch
	if !ok || r.code == 0 {
		return
	}
	pw.c.log.Error("zkrecipes: the server refused to set the persistent watches again; they end", "code", r.code)
	if r.code == codeUnimplemented {
		pw.unsupported.Store(true)
	}
	pw.endAll()
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
		var p, r []string
		size := 0
		for len(persistent) > 0 && (size == 0 || size+4+len(persistent[0]) <= setWatches2Limit) {
			size += 4 + len(persistent[0])
			p, persistent = append(p, persistent[0]), persistent[1:]
		}
		for len(recursive) > 0 && (size == 0 || size+4+len(recursive[0]) <= setWatches2Limit) {
			size += 4 + len(recursive[0])
			r, recursive = append(r, recursive[0]), recursive[1:]
		}
		bodies = append(bodies, jute(nil).long(0).strs(nil).strs(nil).strs(nil).strs(p).strs(r))
	}
	return bodies
}

// notify hands a notification to the watches it is for, on the reader's goroutine:
// a recursive watch on the path or above it hears all but child-list events; a
// persistent one hears its own path's, and, while its path's server watch is
// recursive, a child-list event made of a child's creation or deletion.
func (pw *persistentWatches) notify(typ EventType, path string, zxid int64) {
	if pw.count.Load() == 0 {
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
					ev.Path = w.c.unfix(ev.Path)
					w.deliver(ev)
				}
			}
		}
		if p == "/" {
			return
		}
	}
}

// event is what w, a watch of e on path at, hears of a notification about path.
func (e *watchedPath) event(w *PersistentWatch, typ EventType, path, at string, zxid int64) (WatchEvent, bool) {
	ev := WatchEvent{Type: typ, Path: path, Zxid: zxid}
	switch {
	case w.mode == WatchPersistentRecursive:
		return ev, typ != EventNodeChildrenChanged
	case path == at:
		return ev, e.mode == WatchPersistent || typ != EventNodeChildrenChanged
	case e.mode == WatchPersistentRecursive && parentPath(path) == at &&
		(typ == EventNodeCreated || typ == EventNodeDeleted):
		return WatchEvent{Type: EventNodeChildrenChanged, Path: at, Zxid: zxid}, true
	}
	return ev, false
}

// afterOneShot writes a packet of go-zookeeper's that sets one-shot watches (a read
// with a watch on path, or SetWatches), then sets again the persistent watch of
// each path it names: on 3.8 the one-shot watch replaced it.
func (pw *persistentWatches) afterOneShot(t *trackedConn, b []byte, path string, opcode int32) (int, error) {
	if pw.count.Load() == 0 {
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

// close ends every watch for good: the client closed.
func (pw *persistentWatches) close() {
	pw.mu.Lock()
	pw.ended = true
	pw.mu.Unlock()
	pw.endAll()
}

// endAll ends every watch: the client closed, or the server cannot keep them.
func (pw *persistentWatches) endAll() {
	pw.mu.Lock()
	var all []*PersistentWatch
	for _, e := range pw.paths {
		all = append(all, e.watches...)
	}
	pw.paths = nil
	pw.count.Store(0)
	pw.mu.Unlock()
	for _, w := range all {
		w.endOnce.Do(w.stop)
	}
}
