package cache

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/notify"
	"github.com/zkrecipes/zkrecipes/recipes/internal/lifecycle"
)

// maxReads is how many reads the cache has in flight at most, each on a goroutine of
// its own while it lasts (go-zookeeper's requests block their caller): enough to
// load a wide tree at the speed of the connection rather than of round trips, few
// enough to leave room for the client's other work.
const maxReads = 32

// Cache is a local copy of a node, its children or its subtree, kept converging to
// the server's. It is safe for concurrent use.
type Cache struct {
	c    *framework.Client
	path string
	o    options
	log  *slog.Logger

	// The copy, read by any goroutine, changed by the loop. Events are pushed to the
	// listeners under mu, so that a listener registered at any moment hears exactly
	// the events after the copy it could read then.
	mu        sync.RWMutex
	nodes     map[string]*entry // every node known below the path, live or not
	live      int               // nodes in the copy
	listeners *notify.Listeners[Event]

	// The loop's own state: touched only on the loop's goroutine.
	root       *entry
	epoch      atomic.Int32 // moves on Suspended and Lost; readers read it
	lostEpoch  int32        // the epoch the last Lost began
	unsettled  int          // reads needed before the copy is complete (Initialized, Synced)
	syncing    bool         // Initialized or Synced is due once unsettled is 0
	ready      bool         // Initialized was emitted
	holding    bool         // after Lost: reads wait for a Sync of the new session
	holdingNow atomic.Bool  // holding, for the readers
	held       []task
	failed     []failure // reads that failed on a connection error, to send again
	retry      *time.Timer
	retryArmed bool
	stopped    bool // the client closed: no more reads
	tel        *telemetry

	inbox    *notify.Queue[func()] // work for the loop
	readers  readers               // the goroutines sending reads
	ctx      context.Context       // ends at Close
	cancel   context.CancelFunc
	running  sync.WaitGroup // the loop and the readers
	initDone chan struct{}  // closed once Initialized has been delivered
	halted   chan struct{}  // closed once the client has closed and Stopped is emitted

	life       sync.Mutex // guards the stops, which Start sets and Close calls
	state      lifecycle.Lifecycle
	stopState  func()
	stopWatch  func()
	stopClient func() bool
}

// readers are the goroutines sending the cache's reads (see send).
type readers struct {
	mu      sync.Mutex
	queue   []task // reads waiting for a reader
	running int
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
	for _, opt := range opts {
		if opt == nil {
			return nil, fmt.Errorf("%w: nil Option", ErrInvalid)
		}
		if err := opt(&o); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
	}
	ca := &Cache{
		c:         c,
		path:      path,
		o:         o,
		log:       c.ForRecipes().Logger(),
		nodes:     map[string]*entry{},
		listeners: notify.New[Event](),
		inbox:     notify.NewQueue[func()](),
		initDone:  make(chan struct{}),
		halted:    make(chan struct{}),
		tel:       newTelemetry(c),
	}
	ca.ctx, ca.cancel = context.WithCancel(context.Background())
	ca.root = &entry{path: path}
	ca.nodes[path] = ca.root
	return ca, nil
}

// Path is the path of the cached node.
func (ca *Cache) Path() string { return ca.path }

// Start begins watching, and returns once the first complete copy is loaded and
// Initialized delivered to the listeners registered by then. If ctx ends first,
// Start returns its error and the cache goes on loading in the background (Close
// stops it). A second Start returns ErrStarted; Start after Close, ErrClosed. A
// cache started before its client has a session waits for one. When the client is
// closed, before or during Start, Start returns an error wrapping
// framework.ErrClosed, and the listeners hear Stopped.
func (ca *Cache) Start(ctx context.Context) error {
	ca.life.Lock()
	if err := ca.state.Start(ErrStarted, ErrClosed); err != nil {
		ca.life.Unlock()
		return err
	}
	ca.stopWatch = ca.c.OnWatchEvent(ca.heard)
	ca.stopState = ca.c.Listen(func(s framework.ConnectionState) {
		ca.inbox.Push(func() { ca.connection(s) })
	})
	ca.running.Add(1)
	go ca.loop()
	ca.listeners.Start(ca.delivered)
	ca.inbox.Push(func() {
		ca.syncing = true
		ca.want(ca.root, dataRead)
	})
	ca.stopClient = lifecycle.OnClientClose(ca.c, func() { ca.inbox.Push(ca.clientClosed) })
	ca.life.Unlock()

	select {
	case <-ca.initDone:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("cache: start %s: %w", ca.path, ctx.Err())
	case <-ca.halted:
		return lifecycle.ClientClosed(ca.c, "cache: start "+ca.path)
	case <-ca.ctx.Done():
		return ErrClosed
	}
}

// clientClosed stops the cache for good once its client has closed, on the loop: no
// read can succeed any more. Stopped is the last event; the loop ends after it.
func (ca *Cache) clientClosed() {
	ca.stopped = true
	ca.say(Event{Type: Stopped, Err: lifecycle.ClientClosed(ca.c, "cache: "+ca.path+" stopped")})
	ca.listeners.End()
	close(ca.halted)
}

// Close stops watching: no read is sent and no event delivered after it returns
// (ZooKeeper keeps the watches already set until they fire or the session ends, and
// the cache sets none again). The copy stays as it was: Get, Children, Len and Nodes
// still answer from it. Close is idempotent, and may be called from a listener.
func (ca *Cache) Close() error {
	ca.life.Lock()
	if ca.state.Close() == lifecycle.Closed {
		ca.life.Unlock()
		return nil
	}
	stops := []func(){ca.stopState, ca.stopWatch}
	stopClient := ca.stopClient
	ca.life.Unlock()
	for _, stop := range stops {
		if stop != nil {
			stop()
		}
	}
	if stopClient != nil {
		stopClient()
	}
	ca.cancel()
	ca.listeners.Stop() // unless Close runs inside a listener: it cannot wait for itself
	ca.running.Wait()
	if ca.retry != nil {
		ca.retry.Stop()
	}
	return nil
}

// Get returns the node at path (absolute, inside the cached tree) if the copy has
// it.
func (ca *Cache) Get(path string) (Node, bool) {
	ca.mu.RLock()
	defer ca.mu.RUnlock()
	e := ca.nodes[path]
	if e == nil || !e.live {
		return Node{}, false
	}
	return e.copy(), true
}

// Children returns the names of the children of path that the copy has, sorted; nil
// if the copy has no node at path.
func (ca *Cache) Children(path string) []string {
	ca.mu.RLock()
	defer ca.mu.RUnlock()
	e := ca.nodes[path]
	if e == nil || !e.live {
		return nil
	}
	names := make([]string, 0, len(e.kids))
	for name, kid := range e.kids {
		if kid.live {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// Len is the number of nodes in the copy.
func (ca *Cache) Len() int {
	ca.mu.RLock()
	defer ca.mu.RUnlock()
	return ca.live
}

// Nodes returns every node of the copy, sorted by path.
func (ca *Cache) Nodes() []Node {
	ca.mu.RLock()
	out := make([]Node, 0, ca.live)
	for _, e := range ca.nodes {
		if e.live {
			out = append(out, e.copy())
		}
	}
	ca.mu.RUnlock()
	slices.SortFunc(out, func(a, b Node) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// Listen registers fn to hear every event emitted after this call, in order, on one
// goroutine of the cache's, never two calls at once. Register before Start to hear
// the copy being loaded. fn must not block for long: later events wait for it. stop
// unregisters fn, and may be called from within fn. After Close, and for a nil fn,
// Listen does nothing and returns a stop that does nothing.
func (ca *Cache) Listen(fn func(Event)) (stop func()) {
	if fn == nil || ca.state.State() == lifecycle.Closed {
		return func() {}
	}
	ca.mu.Lock()
	defer ca.mu.Unlock()
	return ca.listeners.Listen(fn)
}

// emit queues ev for the listeners; ca.mu is held.
func (ca *Cache) emit(ev Event) {
	ca.tel.emitted(ev)
	ca.listeners.Push(ev)
}

// delivered is called once every listener has heard ev.
func (ca *Cache) delivered(ev Event) {
	if ev.Type == Initialized {
		close(ca.initDone)
	}
}
