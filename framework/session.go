package framework

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/framework/internal/wire"
)

// handle is one go-zookeeper connection. A client has one at a time; it makes a new
// one when it gives up a session that the server never reported expired, so that the
// old session dies on the server with its ephemeral nodes instead of coming back.
type handle struct {
	gen     int
	conn    *zk.Conn
	events  <-chan zk.Event // go-zookeeper's, closed once its connection loop is done (see dial)
	log     *slog.Logger    // where a failed attempt is told; nil for slog.Default()
	ctx     context.Context // ends when the handle closes: stops a TLS handshake
	cancel  context.CancelFunc
	wire    *wire.Handle              // what its connections share
	net     atomic.Pointer[wire.Conn] // the current connection
	zxid    atomic.Int64              // the zxid of the last packet that carried one (rebuilt.go)
	probing atomic.Bool               // a server that refused a connection is being probed (rebuilt.go)
	lastErr atomic.Pointer[error]     // why the last attempt to reach a server failed
	authed  bool                      // credentials sent on this handle (state goroutine only)
	hosts   *hostProvider

	// The requests sent through the handle (use), which close waits for.
	usersMu sync.Mutex
	closed  bool
	users   sync.WaitGroup
}

// close says goodbye to the server (go-zookeeper waits up to a second for the reply),
// then closes the socket: go-zookeeper's own goroutines only notice a silent server
// after their read timeouts, which would hold Close for most of a session timeout.
//
// It first lets the requests under way finish (on a live connection they are
// answered; without one, go-zookeeper fails them once the cancelled dialer has
// refused every server) and refuses new ones: a request that go-zookeeper v1.0.4
// queues as its Close begins can be answered three times, and the third answer,
// with nobody left to read its two-slot channel, blocks go-zookeeper's connection
// loop for good, and with it Client.Close (seen once in a 50-minute soak).
func (h *handle) close() {
	h.cancel()
	h.usersMu.Lock()
	h.closed = true
	h.usersMu.Unlock()
	h.users.Wait()
	h.conn.Close()
	if t := h.net.Load(); t != nil {
		_ = t.Conn.Close()
	}
	for range h.events { // up to six old events, then its close
	}
}

// use runs req with the handle's connection unless the handle is closing; then it
// fails at once with go-zookeeper's ErrConnectionClosed, which is retried on the
// client's next handle (or reported as ErrClosed by a closing client).
func use[T any](h *handle, p string, req request[T]) (T, error) {
	if !h.enter() {
		var zero T
		return zero, zk.ErrConnectionClosed
	}
	defer h.users.Done()
	v, err := req(h.conn, p)
	return v, h.wire.ReplyError(err)
}

// enter counts a request under way through the handle, which close waits for
// (users.Done when it ends), unless the handle is closing.
func (h *handle) enter() bool {
	h.usersMu.Lock()
	defer h.usersMu.Unlock()
	if h.closed {
		return false
	}
	h.users.Add(1)
	return true
}

// failed records why an attempt to reach a server failed, and logs the first failure
// of a run at Warn: once until a server answers, however often and however
// differently the attempts fail (the servers of an ensemble take turns), and not at
// all when the handle's own closing caused it. Without a logger of the user's, the
// warning goes to slog.Default(), read now so that a program may set it after New.
func (h *handle) failed(err error) {
	if h.lastErr.Swap(&err) != nil || h.ctx.Err() != nil {
		return
	}
	log := h.log
	if log == nil {
		log = slog.Default()
	}
	log.Warn("zkrecipes: cannot connect to a server; will keep trying", "error", err)
}

// noConnection is the error of a wait for a connection that began at start and ended
// with cause, without one: a timeout alone does not tell a stopped server from a
// wrong address or an untrusted certificate, so it says why the last attempt failed.
func (c *Client) noConnection(cause error, start time.Time) *ConnectError {
	c.mu.Lock()
	h := c.link.h
	c.mu.Unlock()
	e := &ConnectError{Err: cause, Waited: time.Since(start)}
	if last := h.lastErr.Load(); last != nil {
		e.Last = *last
	}
	if refused := h.wire.Refused(); refused != nil {
		e.Last = refused // what the user must act on, before how the attempts fail
	}
	return e
}

// ConnectError is a wait for a connection that ended without one: its context ended,
// or its connection timeout ran out (and the retry policy, if it retried, gave up).
// It says how long the caller waited and why the last attempt to reach a server
// failed (refused, an untrusted certificate, no answer). errors.Is and errors.As see
// both errors.
type ConnectError struct {
	Err  error // what ended the wait: the context's error, or one wrapping zk.ErrNoServer
	Last error // why the last attempt to reach a server failed; nil if none had failed
	// Waited is how long the operation had been waiting when it gave up, retries and
	// their pauses included (for WaitConnected, its whole wait).
	Waited time.Duration
}

func (e *ConnectError) Error() string {
	s := fmt.Sprintf("no connection after %v: %v", e.Waited.Round(time.Millisecond), e.Err)
	if e.Last != nil {
		s += "; last connection attempt: " + e.Last.Error()
	}
	return s
}

func (e *ConnectError) Unwrap() []error {
	if e.Last == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.Last}
}

// dial makes a handle; go-zookeeper connects in the background.
func (c *Client) dial(gen int) *handle {
	h := &handle{gen: gen, log: c.opts.logger}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	h.wire = wire.NewHandle(wire.Config{Ctx: h.ctx, Log: c.log, MaxPacket: c.opts.maxPacket,
		Handshake: min(c.opts.connectionTimeout, c.opts.sessionTimeout), Watches: c.watches, Creates: &c.creates,
		Credentials: len(c.opts.auth),
		SASL:        c.opts.saslMechanism(),
		Failed: func(addr string, seen int, err error) {
			h.failed(noAnswer(addr, c.opts.tls, seen, err))
			c.unanswered(h, addr, seen, err)
		},
		Zxid:     func(zxid int64) { c.sawZxid(h, zxid) },
		Answered: func() { h.lastErr.Store(nil) },
	})
	c.watches.Follow(h.wire) // the old handle's late packets reach the watches no more
	h.hosts = &hostProvider{hosts: c.hosts, ctx: h.ctx, connected: h.wire.SessionBack}
	dialer := func(network, addr string, timeout time.Duration) (net.Conn, error) {
		conn, err := c.connect(h, network, addr, timeout)
		if err != nil {
			h.failed(err)
		}
		return conn, err
	}
	// Connect fails only for an empty server list (New refuses it) or when its host
	// provider cannot resolve a name; ours resolves a name when it comes to dial it
	// (hosts.go), so that a DNS outage delays a connection instead of breaking the client.
	// Every event reaches the callback. go-zookeeper also offers each to a channel,
	// which it never blocks on (it drops an event the channel has no room for), so
	// nobody reads it while the handle lives: a goroutine draining it would be woken
	// for every notification, two a contended lock acquisition. close reads it to its
	// end, which says go-zookeeper's connection loop is done.
	conn, events, _ := zk.Connect(c.servers, c.opts.sessionTimeout,
		zk.WithDialer(dialer),
		zk.WithHostProvider(h.hosts),
		zk.WithLogger(zkLogger{c.log}),
		zk.WithLogInfo(false),
		zk.WithEventCallback(func(ev zk.Event) {
			if ev.Type == zk.EventSession {
				c.events.Push(sessionEvent{gen: gen, kind: zkState, state: ev.State})
				return
			}
			c.watchEvent(ev)
		}))
	h.conn, h.events = conn, events
	// The first connection holds nothing (no watches yet): the count is there by the
	// time a hold can begin.
	h.wire.Follow(conn)
	return h
}

// connect makes one connection to a server for go-zookeeper: the dialer's, with TLS
// over it if configured, tracked (internal/wire). The TLS layer sits under the tracking so that the
// tracking reads ZooKeeper's own bytes, not encrypted records.
//
// A closed handle connects no more: go-zookeeper's Close only stops its loop once a
// connection ends or every server has been tried, so a connection made after the
// handle closed would keep an abandoned session alive on its pings, and Client.Close
// would wait for it forever (a 60-minute soak hung so).
func (c *Client) connect(h *handle, network, addr string, timeout time.Duration) (net.Conn, error) {
	if h.ctx.Err() != nil {
		return nil, errHandleClosed
	}
	to := h.hosts.target(addr)
	if to.err != nil {
		return nil, to.err
	}
	conn, err := c.opts.dialer(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	if c.opts.tls != nil {
		bound := min(c.opts.connectionTimeout, c.opts.sessionTimeout)
		if conn, err = handshake(h.ctx, conn, c.opts.tls, addr, to.host, bound); err != nil {
			return nil, err
		}
	}
	t := h.wire.NewConn(conn, addr, to.host)
	h.net.Store(t)
	// close cancels, then closes the connection it finds stored: either it found this
	// one, or this sees it cancelled.
	if h.ctx.Err() != nil {
		_ = t.Conn.Close()
		return nil, errHandleClosed
	}
	return t, nil
}

var errHandleClosed = errors.New("zkrecipes: the session was abandoned or the client closed")

// handleEvent applies the state machine (transition.go) to one event, on the one
// goroutine that drains c.events. The credentials of a new session are sent with
// c.mu unlocked (State and requests go on meanwhile), and their outcome is handled
// at once, as an event of its own, before any later event.
func (c *Client) handleEvent(ev sessionEvent) {
	c.mu.Lock()
	h := c.link.h
	next, do := transition(c.link.session, c.closing.Err() != nil, ev)
	c.apply(next, do)
	c.mu.Unlock()
	if do.authenticate {
		sid := h.conn.SessionID() // 0: already expired again; its Expired event is next in the queue
		ev := sessionEvent{gen: h.gen, kind: authenticated, sid: sid, ok: sid != 0 && c.authenticate(h)}
		if ev.ok {
			ev.rebuilt, ev.ok = c.checkHistory(h, sid)
		}
		c.handleEvent(ev)
	}
}

// apply carries out a transition's actions, in order, and records its session.
// c.mu is held.
func (c *Client) apply(next session, do actions) {
	if do.stopTimer {
		c.stopLostTimer()
	}
	if do.lost == lostTimeout {
		c.log.Warn("zkrecipes: session given up after a whole session timeout without a server",
			"session", fmt.Sprintf("%#x", c.link.session.id))
	}
	for _, s := range do.publish {
		c.publish(s)
	}
	if do.lost != "" {
		c.metrics.sessionLost(do.lost)
	}
	if do.startTimer {
		c.startLostTimer(next.suspendedAt)
	}
	if do.replace {
		c.replaceHandle(next.gen)
	}
	if do.authFailed {
		c.log.Error("zkrecipes: the server refused the client's credentials")
	}
	c.link.session = next
}

// authenticate sends the credentials before anyone learns that the session exists,
// so no request runs without them: until they are accepted, the session is not
// published. go-zookeeper re-sends them by itself on later connections of the same
// handle. A failure comes with a dropped connection, whose next session tries again.
func (c *Client) authenticate(h *handle) bool {
	if h.authed || len(c.opts.auth) == 0 {
		return true
	}
	for _, a := range c.opts.auth {
		_, err := use(h, "", func(conn *zk.Conn, _ string) (struct{}, error) { return struct{}{}, conn.AddAuth(a.scheme, a.auth) })
		if err != nil {
			c.log.Warn("zkrecipes: sending credentials failed; will retry on the next connection",
				"scheme", a.scheme, "error", err)
			return false
		}
	}
	h.authed = true
	return true
}

// publish records a new state and queues it for the listeners. c.mu is held.
func (c *Client) publish(s ConnectionState) {
	l := &c.link
	was := l.session.state.IsConnected()
	l.session.state = s
	switch {
	case s.IsConnected() && !was:
		close(l.connected)
	case !s.IsConnected() && was:
		l.connected = make(chan struct{})
	}
	c.log.Info("zkrecipes: connection state", "state", s.String())
	c.metrics.stateChanged(s)
	if c.opts.errorPolicy.IsError(s) || s == Lost {
		l.errorStates++
	}
	close(l.nextChange)
	l.nextChange = make(chan struct{})
	c.listeners.Push(s)
}

// startLostTimer arms Lost, for the Suspended state counted epoch, one session
// timeout after the server was last heard from, which is when the server itself
// may expire the session. c.mu is held.
func (c *Client) startLostTimer(epoch int) {
	h := c.link.h
	timeout := h.wire.SessionTimeout()
	if timeout <= 0 {
		timeout = c.opts.sessionTimeout
	}
	delay := timeout
	if last := h.wire.LastRead(); !last.IsZero() {
		delay = time.Until(last.Add(timeout))
	}
	c.stopLostTimer()
	gen := h.gen
	c.link.lostTimer = time.AfterFunc(max(delay, 0), func() {
		c.events.Push(sessionEvent{gen: gen, kind: lostTimer, epoch: epoch})
	})
}

func (c *Client) stopLostTimer() {
	if c.link.lostTimer != nil {
		c.link.lostTimer.Stop()
		c.link.lostTimer = nil
	}
}

// replaceHandle abandons the current session for a new one, on a handle of
// generation gen. Closing the old handle fails its requests in flight (retryable)
// and wakes its watchers. c.mu is held.
func (c *Client) replaceHandle(gen int) {
	old := c.link.h
	c.link.h = c.dial(gen)
	c.loops.Add(1)
	go func() {
		defer c.loops.Done()
		old.close()
	}()
}

// zkLogger sends go-zookeeper's log lines to the client's logger at Debug.
type zkLogger struct {
	l interface{ Debug(string, ...any) }
}

func (z zkLogger) Printf(format string, args ...any) {
	z.l.Debug("go-zookeeper: " + fmt.Sprintf(format, args...))
}

// ErrPacketTooLarge is the error of a connection whose server sent a packet larger
// than the client's maximum (WithMaxPacketSize): the connection is dropped, as the
// Java client drops it, and a reply too large is the failure of its request.
var ErrPacketTooLarge = wire.ErrPacketTooLarge
