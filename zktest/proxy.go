package zktest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Errors returned by the proxy.
var (
	ErrProxyTarget = errors.New("zktest: proxy target must be host:port")
	ErrProxyClosed = errors.New("zktest: proxy closed")
)

// proxyMode is what the proxy does with bytes and connections.
type proxyMode int

const (
	modeForward   proxyMode = iota // pass bytes both ways
	modeCut                        // no connections: close existing ones, close new ones at once
	modeBlackhole                  // keep connections open, drop every byte
)

// copyBufSize is the chunk size of the copy loops. The mode is checked once per
// chunk, so a chunk read just before a mode change may still be forwarded.
const copyBufSize = 32 << 10

// Proxy is a TCP proxy on 127.0.0.1 that forwards to a target address and can
// cut or black-hole the traffic, to inject network faults between a ZooKeeper
// client and server. All methods are safe for concurrent use.
//
// Only connections made through the proxy are affected: a client whose server
// list also names the server directly can reconnect around it.
type Proxy struct {
	port   *heldPort    // the proxy's port, from start to Close, listening or not
	ln     net.Listener // replaced by admit after refuse
	addr   string
	ctx    context.Context // cancelled by Close; aborts dials in progress
	cancel context.CancelFunc
	wg     sync.WaitGroup // the accept loop and every connection goroutine

	mu     sync.Mutex
	target string
	mode   proxyMode
	pairs  map[*proxyPair]struct{}
	closed bool
	// refusing: the listener is closed, so connections are refused as by a port
	// nobody listens on (an ensemble's route to a stopped or isolated member).
	refusing bool

	dropped atomic.Int64 // bytes dropped while black-holed; lets tests wait without sleeping

	// redial, when set (under mu), is how long a refused dial is tried again: the
	// client's connect has succeeded, so a refusal would reach it as a dropped
	// connection where the real thing would have refused, or accepted a moment later.
	redial time.Duration

	// greet, when set (under mu), passes the first bytes of each new connection on to the target
	// itself, possibly changed (the ensemble's election routes rewrite an address), before
	// the copying begins.
	greet func(client, upstream net.Conn) error
}

// proxyPair is one client connection and its upstream connection to the target
// (nil while dialing, or when accepted during a blackhole).
type proxyPair struct {
	client   net.Conn
	upstream net.Conn
}

// NewProxy starts a proxy on a free 127.0.0.1 port forwarding to target. It is
// closed by tb.Cleanup, so it outlives defers in the test function.
func NewProxy(tb testing.TB, target string) *Proxy {
	tb.Helper()
	p, err := StartProxy(target)
	if err != nil {
		tb.Fatalf("zktest: start proxy: %v", err)
	}
	tb.Cleanup(func() { _ = p.Close() })
	return p
}

// StartProxy starts a proxy on a free 127.0.0.1 port forwarding to target
// ("host:port"). The caller must Close it.
func StartProxy(target string) (*Proxy, error) {
	if err := checkTarget(target); err != nil {
		return nil, err
	}
	port, err := holdPort()
	if err != nil {
		return nil, err
	}
	ln, err := port.listen()
	if err != nil {
		_ = port.release()
		return nil, fmt.Errorf("zktest: proxy listen: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{
		port:   port,
		ln:     ln,
		addr:   port.addr,
		ctx:    ctx,
		cancel: cancel,
		target: target,
		pairs:  make(map[*proxyPair]struct{}),
	}
	p.wg.Add(1)
	go p.acceptLoop(ln)
	return p, nil
}

func checkTarget(target string) error {
	host, port, err := net.SplitHostPort(target)
	if err != nil || host == "" || port == "" {
		return fmt.Errorf("%w: %q", ErrProxyTarget, target)
	}
	return nil
}

// Addr returns the proxy's address, "127.0.0.1:port". Give it to clients in
// place of the target's address.
func (p *Proxy) Addr() string { return p.addr }

// SetTarget makes later connections go to target, for switching between
// ensemble members. Connections already open keep their old target. An
// unusable target makes new connections close at once, as a stopped server would.
func (p *Proxy) SetTarget(target string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.target = target
}

// Cut closes every open connection, on both sides, and until Restore closes each
// new connection as soon as it is accepted, so clients see a prompt EOF or
// reset rather than a hang.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mode = modeCut
	p.closeAllLocked()
}

// Drop closes every open connection, on both sides, and leaves the proxy as it was:
// forwarding, new connections go through at once. It is a connection loss with no
// window in which a reconnect is refused, as there is between Cut and Restore, where
// a client that tried every server (go-zookeeper with one) waits a second before it
// tries again: longer than a short session.
func (p *Proxy) Drop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closeAllLocked()
}

// Blackhole keeps connections open, existing and new ones, but passes no bytes
// in either direction until Restore: bytes read from either side are dropped,
// not buffered. To clients this looks like a network partition: no EOF, just
// silence, so they notice only through their own timeouts.
func (p *Proxy) Blackhole() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mode = modeBlackhole
}

// Restore returns to normal forwarding for new connections.
//
// Connections that were open during a Blackhole are closed, not resumed: bytes
// were dropped from the middle of their streams, and ZooKeeper's length-prefixed
// protocol would be out of step on both sides. Clients reconnect, as they would
// after a real partition heals with their connections timed out.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mode != modeForward {
		// After Cut there is nothing left to close; after Blackhole every open
		// connection was black-holed.
		p.closeAllLocked()
	}
	p.mode = modeForward
}

// ExpireSession black-holes the proxy until the ZooKeeper server has expired
// the sessions of clients connected through it, then restores it. On their
// reconnect those clients learn of the expiry (go-zookeeper reports
// StateExpired in the handshake).
//
// sessionTimeout must be the timeout the server granted, which it clamps to
// [2, 20] ticks, not merely the one requested. The server expires a session
// about sessionTimeout after it last heard from the client, rounded up to its
// next tick. The proxy cannot observe that server-side event, so this is a
// timed wait: sessionTimeout plus a margin of sessionTimeout/2 (at least one
// tick, since the timeout is at least two ticks) plus 500ms for the server to
// commit the session's close.
//
// If ctx ends first, the proxy is restored and ctx's error returned, wrapped.
func (p *Proxy) ExpireSession(ctx context.Context, sessionTimeout time.Duration) error {
	if sessionTimeout <= 0 {
		return fmt.Errorf("zktest: expire session: session timeout %v must be positive", sessionTimeout)
	}
	p.Blackhole()
	defer p.Restore()

	timer := time.NewTimer(sessionTimeout + sessionTimeout/2 + 500*time.Millisecond)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("zktest: expire session: %w", ctx.Err())
	case <-p.ctx.Done():
		return fmt.Errorf("zktest: expire session: %w", ErrProxyClosed)
	}
}

// Close stops the proxy: it closes the listener and every connection, waits for
// all of its goroutines and gives its port back. It is idempotent; later calls
// return nil.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.wg.Wait()
		return nil
	}
	p.closed = true
	var err error
	if !p.refusing {
		err = p.ln.Close()
	}
	p.closeAllLocked()
	p.cancel()
	p.mu.Unlock()

	p.wg.Wait()
	return errors.Join(err, p.port.release())
}

// closeAllLocked closes every connection pair. Their goroutines see the error
// on their next Read or Write, which unblocks any read in progress at once.
func (p *Proxy) closeAllLocked() {
	for pr := range p.pairs {
		p.closePairLocked(pr)
	}
}

func (p *Proxy) closePairLocked(pr *proxyPair) {
	_ = pr.client.Close()
	if pr.upstream != nil {
		_ = pr.upstream.Close()
	}
	delete(p.pairs, pr)
}

func (p *Proxy) closePair(pr *proxyPair) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closePairLocked(pr)
}

func (p *Proxy) currentMode() proxyMode {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mode
}

func (p *Proxy) acceptLoop(ln net.Listener) {
	defer p.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Transient, such as running out of file descriptors: back off
			// briefly rather than spin.
			time.Sleep(10 * time.Millisecond)
			continue
		}
		p.wg.Add(1)
		go p.serve(c)
	}
}

// serve handles one accepted connection until it closes.
func (p *Proxy) serve(c net.Conn) {
	defer p.wg.Done()
	pr := &proxyPair{client: c}

	p.mu.Lock()
	if p.closed || p.mode == modeCut || p.refusing {
		p.mu.Unlock()
		_ = c.Close()
		return
	}
	p.pairs[pr] = struct{}{}
	if p.mode == modeBlackhole {
		// Accept but do not dial: in a partition the server would not hear of
		// this connection at all.
		p.mu.Unlock()
		p.pipe(pr, c, nil)
		return
	}
	target := p.target
	p.mu.Unlock()

	// Registered before dialing, so Cut and Close reach this connection while
	// the dial is in progress; Close also aborts the dial through p.ctx.
	up, err := p.dial(pr, target)
	if err != nil {
		p.closePair(pr)
		return
	}
	p.mu.Lock()
	if _, ok := p.pairs[pr]; !ok {
		// Closed by Cut, Restore or Close during the dial.
		p.mu.Unlock()
		_ = up.Close()
		return
	}
	pr.upstream = up
	greet := p.greet
	p.mu.Unlock()
	if greet != nil {
		if err := greet(c, up); err != nil {
			p.closePair(pr)
			return
		}
	}

	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.pipe(pr, up, c)
	}()
	p.pipe(pr, c, up)
}

// pipe copies src to dst chunk by chunk, dropping chunks while black-holed
// (dst nil: always drop). When src ends, it closes the whole pair: ZooKeeper
// does not half-close, and closing both sides ends the other direction's pipe.
func (p *Proxy) pipe(pr *proxyPair, src, dst net.Conn) {
	defer p.closePair(pr)
	buf := make([]byte, copyBufSize)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			// In modeCut the connections are already closed, so Write fails.
			if dst == nil || p.currentMode() == modeBlackhole {
				p.dropped.Add(int64(n))
			} else if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// asRoute makes the proxy one of an ensemble's routes: greet passes on the first
// bytes of every later connection, and a refused dial is tried again for redial.
func (p *Proxy) asRoute(greet func(client, upstream net.Conn) error, redial time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.greet, p.redial = greet, redial
}

// refuse closes the listener, so that new connections are refused at once, and
// closes the open ones, until admit. The port stays the proxy's (heldPort), so
// that no other listener or connection can take it meanwhile.
func (p *Proxy) refuse() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.refusing || p.closed {
		return
	}
	p.refusing = true
	_ = p.ln.Close()
	p.closeAllLocked()
}

// admit listens again, on the same port.
func (p *Proxy) admit() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.refusing || p.closed {
		return nil
	}
	ln, err := p.port.listen()
	if err != nil {
		return fmt.Errorf("zktest: proxy listen again: %w", err)
	}
	p.ln, p.refusing = ln, false
	p.wg.Add(1)
	go p.acceptLoop(ln)
	return nil
}

// dial connects to target for pr, trying again every few milliseconds for redial
// while the target refuses, until pr is closed or the proxy is.
func (p *Proxy) dial(pr *proxyPair, target string) (net.Conn, error) {
	p.mu.Lock()
	until := time.Now().Add(p.redial)
	p.mu.Unlock()
	var d net.Dialer
	for {
		up, err := d.DialContext(p.ctx, "tcp", target)
		if err == nil || time.Now().After(until) || !errors.Is(err, syscall.ECONNREFUSED) {
			return up, err
		}
		p.mu.Lock()
		_, open := p.pairs[pr]
		p.mu.Unlock()
		if !open {
			return nil, err
		}
		select {
		case <-time.After(20 * time.Millisecond):
		case <-p.ctx.Done():
			return nil, err
		}
	}
}
