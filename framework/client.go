package framework

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/framework/internal/wire"

	"github.com/zkrecipes/zkrecipes/internal/notify"
)

// ErrClosed is returned by every operation of a closed Client, including those that
// were waiting when Close was called.
var ErrClosed = errors.New("framework: client closed")

// closeWait bounds how long Close waits for background deletes to finish, as
// Curator's maxCloseWaitMs does.
const closeWait = time.Second

// Client is one ZooKeeper session, kept alive across connection drops and replaced
// after a loss, with Curator's connection states, retries, namespace and ACLs.
// It is safe for concurrent use. Namespaced makes more Clients on the same session.
type Client struct {
	*core
	namespace      string
	namespaceReady atomic.Bool
	view           *view // nil for the client New made (namespaced.go)

	sharedMu sync.Mutex
	shared   map[any]any // Plumbing.Shared's values, made on first use
}

// core is the session and everything about it that a Client's namespaced views
// share.
type core struct {
	servers []string
	hosts   *hosts // the servers in use, as written, and their names' lookups
	opts    options
	log     *slog.Logger
	metrics *clientMetrics // nil when nothing is measured

	events    *notify.Queue[sessionEvent]        // go-zookeeper's session events, and our timers
	listeners *notify.Listeners[ConnectionState] // hear what is published, in order

	mu   sync.Mutex
	link link // guarded by mu

	// seenZxid is the highest zxid a server has answered with, in the history the
	// client last checked (rebuilt.go).
	seenZxid atomic.Int64
	rebuilds atomic.Int64 // how many times seenZxid went back (Plumbing.Rebuilds)

	watchSubs watchSubscribers // OnWatchEvent's
	watches   *wire.Watches    // AddWatch's
	creates   wire.Creates     // the creates recipes trace (Plumbing.Traced)

	phases
	requests requests       // background work and the request goroutines (workers.go)
	loops    sync.WaitGroup // the client's own goroutines: the state goroutine, tracking, probes, a replaced handle's close
	once     sync.Once
}

// link is the connection and the session as published; guarded by core.mu.
type link struct {
	h           *handle // the current go-zookeeper connection
	session     session
	connected   chan struct{} // closed while session.state.IsConnected()
	lostTimer   *time.Timer
	errorStates int64         // how many published states the error policy counts as errors, or Lost
	nextChange  chan struct{} // closed when the next state is published, or Close begins
}

// phases are the moments of Close, one signal each: a context whose Done is the
// flag. Close ends them in this order.
type phases struct {
	// closing ends when Close begins, with ErrClosed as its cause: user operations
	// give up, and nothing more is published. Cancelled under core.mu, so that
	// background work counted before it is waited for, and none after it starts.
	closing    context.Context
	beginClose context.CancelCauseFunc
	// abandoned ends when Close stops waiting for background work: that work's
	// contexts end, and our loops stop.
	abandoned context.Context
	abandon   context.CancelFunc
	// drained ends once no request can start or is running: idle request
	// goroutines stop.
	drained context.Context
	drain   context.CancelFunc
}

func newPhases() phases {
	var p phases
	p.closing, p.beginClose = context.WithCancelCause(context.Background())
	p.abandoned, p.abandon = context.WithCancel(context.Background())
	p.drained, p.drain = context.WithCancel(context.Background())
	return p
}

// New validates its arguments and starts connecting in the background, as Curator's
// client does; it does not wait for a server (see WaitConnected). servers are
// "host:port" addresses of the ensemble's members.
func New(servers []string, opts ...Option) (*Client, error) {
	if len(servers) == 0 {
		return nil, invalidOption("no servers")
	}
	for _, s := range servers {
		if strings.TrimSpace(s) == "" || strings.ContainsAny(s, " ,/") {
			return nil, invalidOption("bad server address %q (want host:port)", s)
		}
	}
	o := defaultOptions()
	for _, opt := range opts {
		if opt == nil {
			return nil, invalidOption("nil Option")
		}
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	c := &Client{namespace: o.namespace, core: &core{
		servers:   append([]string(nil), servers...),
		opts:      o,
		log:       cmp.Or(o.logger, slog.New(slog.DiscardHandler)),
		metrics:   newClientMetrics(o.meterProvider),
		events:    notify.NewQueue[sessionEvent](),
		listeners: notify.New[ConnectionState](),
		link:      link{connected: make(chan struct{}), nextChange: make(chan struct{}), session: session{gen: 1}},
		phases:    newPhases(),
		requests:  requests{idle: make(chan *worker, idleWorkers)},
	}}
	c.watches = wire.NewWatches(c.log)
	if c.metrics != nil && c.metrics.lastErrors != nil {
		c.log.Warn("zkrecipes: making the client's instruments", "error", c.metrics.lastErrors)
	}
	c.hosts = newHosts(servers, o.resolver, c.log, min(o.connectionTimeout, o.sessionTimeout))
	c.link.h = c.dial(c.link.session.gen)
	c.loops.Add(1)
	go func() {
		defer c.loops.Done()
		for ev, ok := c.events.Pop(c.abandoned.Done()); ok; ev, ok = c.events.Pop(c.abandoned.Done()) {
			c.handleEvent(ev)
		}
	}()
	c.listeners.Start(nil)
	if o.ensembleTracking {
		c.loops.Add(1)
		go func() { defer c.loops.Done(); c.track() }()
	}
	return c, nil
}

// WaitConnected blocks until the client has a session. Before the client's first
// session it waits one connection timeout at most (WithConnectionTimeout), as an
// operation does, unless the client was made WithRetryBeforeFirstConnection: a wrong
// address or an ensemble that is down ends the wait with a *ConnectError wrapping
// ErrNoServer, even for a ctx that never ends. Once the client has had a session,
// it waits as long as ctx allows, through any outage. It returns nil, ErrClosed, or a
// *ConnectError that says what ended the wait (the connection timeout, or the
// context's error), how long it waited and why the last attempt to reach a server
// failed (refused, an untrusted certificate, no answer), if one did. A ctx that has
// ended already gives ctx's error (wrapped) even while connected, as the standard
// library's calls do, so that a loop around WaitConnected ends with its ctx.
func (c *Client) WaitConnected(ctx context.Context) error {
	start := time.Now()
	var timer *time.Timer // the connection timeout, before a first session
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		c.mu.Lock()
		state, ch := c.link.session.state, c.link.connected
		c.mu.Unlock()
		switch {
		case c.closing.Err() != nil:
			return ErrClosed
		case state.IsConnected() && ctx.Err() != nil:
			return fmt.Errorf("framework: %w", ctx.Err())
		case state.IsConnected():
			return nil
		}
		var timeout <-chan time.Time
		if state == Latent && !c.opts.retryFirst {
			if timer == nil {
				timer = time.NewTimer(c.opts.connectionTimeout)
			}
			timeout = timer.C
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("framework: %w", c.noConnection(ctx.Err(), start))
		case <-c.closing.Done():
			return ErrClosed
		case <-timeout:
			return fmt.Errorf("framework: %w", c.noConnection(c.connectionTimedOut(), start))
		}
	}
}

// State is the last connection state published (Latent before the first); listeners
// may not have heard it yet.
func (c *Client) State() ConnectionState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.link.session.state
}

// Listen registers fn to hear every state change after this call, in order, on one
// goroutine of the client's (never go-zookeeper's). fn must not block for long: later
// changes wait for it. stop unregisters fn, and may be called from within fn; a
// delivery already under way when stop is called may still reach fn.
func (c *Client) Listen(fn func(ConnectionState)) (stop func()) { return c.listeners.Listen(fn) }

// SessionID is the id of the session requests currently run in, 0 while there is
// none. A node's ephemeral owner equal to it means the node is ours and alive.
func (c *Client) SessionID() int64 { return c.Conn().SessionID() }

// Namespace is the client's namespace, "" for none.
func (c *Client) Namespace() string { return c.namespace }

// SessionTimeout is the session timeout the client asked for.
func (c *Client) SessionTimeout() time.Duration { return c.opts.sessionTimeout }

// NegotiatedSessionTimeout is the session timeout the server granted (it clamps the
// one asked for to its own range), or 0 before the first session.
func (c *Client) NegotiatedSessionTimeout() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.link.h.wire.SessionTimeout()
}

// Conn is the current go-zookeeper connection, for what the client does not wrap: no
// namespace, no retries, no ACL provider. It is replaced when a session is given up
// (Lost without expiry), so do not keep it.
func (c *Client) Conn() *zk.Conn {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.link.h.conn
}

// Format prints the client, whatever the verb, as its servers, namespace and
// state: never its credentials, which fmt's default printing of the struct would
// show, and without reading its fields unlocked while its goroutines change them.
func (c *Client) Format(f fmt.State, _ rune) {
	if c == nil {
		fmt.Fprint(f, "<nil>")
		return
	}
	fmt.Fprintf(f, "zkrecipes client of %s", strings.Join(c.servers, ","))
	if c.namespace != "" {
		fmt.Fprintf(f, " in namespace %s", c.namespace)
	}
	fmt.Fprintf(f, ": %s", c.State())
	if sid := c.SessionID(); sid != 0 {
		fmt.Fprintf(f, ", session %#x", sid)
	}
}

// Close ends the session: its ephemeral nodes go at once. It waits up to a second for
// background deletes to finish, and a little longer for go-zookeeper to say goodbye
// to the server, then releases every goroutine. Operations blocked in it and after it
// return ErrClosed at once. Close is idempotent, and may be called from a listener.
func (c *Client) Close() error {
	if c.view != nil {
		c.view.closed.Store(true)
		return nil
	}
	c.once.Do(func() {
		c.mu.Lock()
		c.beginClose(ErrClosed)
		// No state is published from now on: StateChanges' next stays closed, and
		// wakes the waiters that read it to find the client closed.
		close(c.link.nextChange)
		c.mu.Unlock()

		idle := make(chan struct{})
		go func() { c.requests.bg.Wait(); close(idle) }()
		select {
		case <-idle:
		case <-time.After(closeWait):
			c.log.Warn("zkrecipes: closing with background work still pending")
		}
		c.abandon()

		c.mu.Lock()
		h := c.link.h
		c.stopLostTimer()
		c.mu.Unlock()
		c.listeners.Stop() // unless Close runs inside a listener: it cannot wait for itself
		h.close()
		c.watches.Close()
		<-idle
		c.drain()
		c.requests.workers.Wait()
		c.loops.Wait()
		c.opts.sasl.close()
	})
	return nil
}
