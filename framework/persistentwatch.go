package framework

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/zkrecipes/zkrecipes/framework/internal/wire"
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
	w       wire.Watch
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
	return w.c.watches.Remove(ctx, &w.w)
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
	w.c, w.mode, w.done = c, mode, make(chan struct{})
	w.w = wire.Watch{Path: sp, Mode: wire.Mode(mode), End: func() { w.endOnce.Do(w.stop) },
		Deliver: func(ev wire.Event) {
			w.deliver(WatchEvent{Type: ev.Type, Path: c.unfix(ev.Path), Zxid: ev.Zxid, Reset: ev.Reset})
		}}
	pw := c.watches
	err = c.retry(ctx, opAddWatch, func(ctx context.Context) error {
		if _, err := c.connection(ctx, false); err != nil {
			return err
		}
		ch, err := pw.Add(&w.w)
		switch {
		case errors.Is(err, wire.ErrEnded):
			return ErrClosed
		case errors.Is(err, wire.ErrUnsupported):
			return fmt.Errorf("add watch on %s: %w", path, ErrPersistentWatchUnsupported)
		case err != nil:
			return err
		}
		select {
		case r, ok := <-ch:
			switch {
			case !ok:
				return wire.ErrConnectionLost
			case r.Code == wire.CodeUnimplemented:
				pw.MarkUnsupported()
				return fmt.Errorf("add watch on %s: %w", path, ErrPersistentWatchUnsupported)
			case r.Code != 0:
				return fmt.Errorf("framework: add watch on %s: the server answered with error code %d", path, r.Code)
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
		_ = pw.Remove(doneContext, &w.w) // unregisters; a removal is not waited for
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
