package cache

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/notify"
	"github.com/zkrecipes/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/zkrecipes/recipes/internal/attempt"
	"github.com/zkrecipes/zkrecipes/recipes/internal/lifecycle"
)

// Cache is a local copy of a node, its children or its subtree, kept converging to
// the server's. It is safe for concurrent use.
type Cache struct {
	c     *framework.Client
	path  string
	store *store  // the copy, read by any goroutine
	en    *engine // changes the copy, on its loop

	watch    *framework.PersistentWatch // nil on one-shot watches
	cancel   context.CancelFunc         // ends the engine's context, at Close
	initDone chan struct{}              // closed once Initialized has been delivered

	life       sync.Mutex // guards the stops, which Start sets and Close calls
	state      lifecycle.Lifecycle
	stopState  func()
	stopWatch  func()
	stopClient func() bool
}

// New makes a cache of path and what lies below it (see Depth), for c. Nothing is
// read until Start. path may be the root "/".
func New(c *framework.Client, path string, opts ...Option) (*Cache, error) {
	if c == nil {
		return nil, fmt.Errorf("%w: nil client", ErrInvalid)
	}
	if err := framework.ValidatePath(path); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	o := defaultOptions()
	if err := args.Apply(&o, opts); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	st := newStore(path)
	en := &engine{
		c:      c,
		path:   path,
		o:      o,
		log:    c.ForRecipes().Logger(),
		store:  st,
		root:   st.root,
		inbox:  notify.NewQueue[func()](),
		halted: make(chan struct{}),
		tel:    newTelemetry(c),
	}
	ca := &Cache{c: c, path: path, store: st, en: en, initDone: make(chan struct{})}
	en.ctx, ca.cancel = context.WithCancel(context.Background())
	return ca, nil
}

// Path is the path of the cached node.
func (ca *Cache) Path() string { return ca.path }

// Start begins watching, and returns once the first complete copy is loaded and
// Initialized delivered to the listeners registered by then. If ctx ends first,
// Start returns its error and the cache goes on loading in the background (Close
// stops it). A second Start returns ErrStarted; Start after Close, ErrClosed. When
// the client is closed, before or during Start, Start returns an error wrapping
// framework.ErrClosed, and the listeners hear Stopped.
//
// A cache started before its client's first session waits for one as the client's
// operations do (framework.Client.WaitConnected): one connection timeout at most,
// unless the client was made WithRetryBeforeFirstConnection. When none comes in
// time, Start returns the client's *framework.ConnectError (wrapping
// framework.ErrNoServer, and saying why the last attempt to reach a server failed), and
// the cache is as before Start: nothing was read or told, nothing goes on in the
// background, and Start may be called again, as a Curator program calls
// blockUntilConnected again. Once the client has had a session, Start waits
// through an outage for as long as ctx allows.
func (ca *Cache) Start(ctx context.Context) error {
	ca.life.Lock()
	if err := ca.state.Start(ErrStarted, ErrClosed); err != nil {
		ca.life.Unlock()
		return err
	}
	ca.life.Unlock()
	if err := ca.firstSession(ctx); err != nil {
		return err
	}
	watch, err := ca.en.follow(ctx)
	if err != nil {
		return ca.unstart(err)
	}
	ca.life.Lock()
	if ca.state.State() == lifecycle.Closed { // Close came meanwhile
		ca.life.Unlock()
		if watch != nil {
			_ = watch.Close(ctx)
		}
		return ErrClosed
	}
	en := ca.en
	ca.watch = watch
	if watch == nil {
		ca.stopWatch = ca.c.OnWatchEvent(en.heard)
	}
	ca.stopState = ca.c.Listen(func(s framework.ConnectionState) {
		en.inbox.Push(func() { en.connection(s) })
	})
	en.running.Add(1)
	go en.loop()
	ca.store.listeners.Start(ca.delivered)
	en.inbox.Push(en.load)
	ca.stopClient = lifecycle.OnClientClose(ca.c, func() { en.inbox.Push(en.clientClosed) })
	ca.life.Unlock()

	select {
	case <-ca.initDone:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("cache: start %s: %w", ca.path, ctx.Err())
	case <-en.halted:
		return lifecycle.ClientClosed(ca.c, "cache: start "+ca.path)
	case <-en.ctx.Done():
		return ErrClosed
	}
}

// firstSession waits for the client's first session (attempt.FirstSession), which
// Close ends too. A wait that runs out undoes Start, and its error is Start's; one
// that ends otherwise lets Start go on, which then reports the end as it always does
// (ctx's error, with the cache loading in the background; the client's close, with
// Stopped told; Close, with ErrClosed).
func (ca *Cache) firstSession(ctx context.Context) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(ca.en.ctx, cancel)() // Close ends the wait
	err := attempt.FirstSession(wctx, ca.c)
	if err == nil {
		return nil
	}
	return ca.unstart(err)
}

// unstart undoes a Start that could not begin, and returns its error.
func (ca *Cache) unstart(err error) error {
	ca.life.Lock()
	defer ca.life.Unlock()
	if !ca.state.Unstart() {
		return ErrClosed
	}
	if errors.Is(err, framework.ErrClosed) {
		return lifecycle.ClientClosed(ca.c, "cache: start "+ca.path)
	}
	return fmt.Errorf("cache: start %s: %w", ca.path, err)
}

// Close stops watching: no read is sent and no event delivered after it returns. It
// removes the cache's persistent watch from the server (on one-shot watches,
// ZooKeeper keeps those already set until they fire or the session ends, and the
// cache sets none again). The copy stays as it was: Get, Children, Len and Nodes
// still answer from it. ctx bounds the wait for the watch's removal and the reads
// under way to end (the cache writes nothing); if it ends first, Close returns its error and they end on their
// own. A second Close returns nil; Close may be called from a listener.
func (ca *Cache) Close(ctx context.Context) error {
	ca.life.Lock()
	if ca.state.Close() == lifecycle.Closed {
		ca.life.Unlock()
		return nil
	}
	stops := []func(){ca.stopState, ca.stopWatch}
	stopClient, watch := ca.stopClient, ca.watch
	ca.life.Unlock()
	var unwatched error
	if watch != nil {
		unwatched = watch.Close(ctx)
	}
	for _, stop := range stops {
		if stop != nil {
			stop()
		}
	}
	if stopClient != nil {
		stopClient()
	}
	ca.cancel()
	ca.store.listeners.Stop() // unless Close runs inside a listener: it cannot wait for itself
	done := make(chan struct{})
	go func() { ca.en.wait(); close(done) }()
	select {
	case <-done:
		if unwatched != nil {
			return fmt.Errorf("cache: closing %s: removing its watch: %w", ca.path, unwatched)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("cache: closing %s: reads still under way: %w", ca.path, ctx.Err())
	}
}

// Get returns the node at path (absolute, inside the cached tree) if the copy has
// it.
func (ca *Cache) Get(path string) (Node, bool) { return ca.store.get(path) }

// Children returns the names of the children of path that the copy has, sorted; nil
// if the copy has no node at path.
func (ca *Cache) Children(path string) []string { return ca.store.children(path) }

// Len is the number of nodes in the copy.
func (ca *Cache) Len() int { return ca.store.len() }

// Nodes returns every node of the copy, sorted by path.
func (ca *Cache) Nodes() []Node { return ca.store.all() }

// Listen registers fn to hear every event emitted after this call, in order, on one
// goroutine of the cache's, never two calls at once. An event is emitted for each
// change the cache sees, not for each change made: changes faster than its reads come
// as one Changed, whose version skips the others; the copy always ends at the latest
// state. Register before Start to hear
// the copy being loaded. fn must not block for long: later events wait for it. stop
// unregisters fn, and may be called from within fn. After Close, and for a nil fn,
// Listen does nothing and returns a stop that does nothing.
func (ca *Cache) Listen(fn func(Event)) (stop func()) {
	if fn == nil || ca.state.State() == lifecycle.Closed {
		return func() {}
	}
	return ca.store.listen(fn)
}

// delivered is called once every listener has heard ev.
func (ca *Cache) delivered(ev Event) {
	if ev.Type == Initialized {
		close(ca.initDone)
	}
}
