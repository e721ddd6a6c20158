package zkrtest

import (
	"encoding/binary"
	"net"
	"sync"
	"time"
)

// LossyDialer connects to ZooKeeper for real (give its Dial to framework.WithDialer)
// and can lose one write's answer at the worst moment, for the tests of what a lost
// reply means: the next SetData request either reaches the server (whose reply is
// then dropped) or is dropped itself, and from then on the connection hears nothing
// until Cut, or until the client gives up on it. Target, if set, is dialled instead
// of the address asked for (a proxy's, say).
type LossyDialer struct {
	Target string

	mu      sync.Mutex
	action  Loss
	op      int32  // the opcode action waits for: SetData, unless BeforeNextOf said otherwise
	before  func() // with interfere: runs just before the request goes
	conn    *lossyConn
	written chan struct{} // closed once the armed request went (or was dropped)
	sent    map[int32]int // requests sent, by opcode
}

// Loss is what happens to the next SetData.
type Loss int

const (
	none        Loss = iota
	LoseReply        // the server gets the request; its reply never comes back
	LoseRequest      // the request never reaches the server
	interfere        // the request goes after a function of the test has run
)

// ZooKeeper's opcodes, after a request's length and xid.
const (
	OpCreate  = 1
	OpGetData = 4
	opSetData = 5
	opPing    = 11
)

// Requests returns how many requests of each opcode (zk's protocol numbers: 1 create,
// 4 getData, 5 setData...) went out since the last call, pings left out, and counts
// again from zero.
func (d *LossyDialer) Requests() map[int32]int {
	d.mu.Lock()
	defer d.mu.Unlock()
	sent := d.sent
	d.sent = nil
	return sent
}

// Dial is a zk.Dialer.
func (d *LossyDialer) Dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	if d.Target != "" {
		addr = d.Target
	}
	c, err := net.DialTimeout(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.conn = &lossyConn{Conn: c, d: d}
	return d.conn, nil
}

// Arm makes the next SetData suffer f; the channel closes when it has.
func (d *LossyDialer) Arm(f Loss) <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.action, d.op, d.written = f, opSetData, make(chan struct{})
	return d.written
}

// BeforeNext runs fn (which may arm again) just before the next SetData is sent, on
// go-zookeeper's sending goroutine.
func (d *LossyDialer) BeforeNext(fn func()) <-chan struct{} { return d.BeforeNextOf(opSetData, fn) }

// BeforeNextOf is BeforeNext for the next request of opcode op (OpCreate,
// OpGetData...) instead of the next SetData.
func (d *LossyDialer) BeforeNextOf(op int32, fn func()) <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.action, d.op, d.before, d.written = interfere, op, fn, make(chan struct{})
	return d.written
}

// Cut closes the current connection: go-zookeeper fails what awaits a reply with a
// connection loss and connects again.
func (d *LossyDialer) Cut() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.conn != nil {
		_ = d.conn.Conn.Close()
	}
}

type lossyConn struct {
	net.Conn
	d      *LossyDialer
	mu     sync.Mutex
	isDeaf bool
}

func (c *lossyConn) Write(b []byte) (int, error) {
	c.d.mu.Lock()
	if len(b) >= 12 {
		if op := int32(binary.BigEndian.Uint32(b[8:12])); op != opPing {
			if c.d.sent == nil {
				c.d.sent = map[int32]int{}
			}
			c.d.sent[op]++
		}
	}
	f := c.d.action
	if f == none || len(b) < 12 || int32(binary.BigEndian.Uint32(b[8:12])) != c.d.op {
		c.d.mu.Unlock()
		return c.Conn.Write(b)
	}
	c.d.action = none
	written, before := c.d.written, c.d.before
	c.d.mu.Unlock()
	if f == interfere {
		before()
		close(written)
		return c.Conn.Write(b)
	}
	c.mu.Lock()
	c.isDeaf = true
	c.mu.Unlock()
	defer close(written)
	if f == LoseRequest {
		return len(b), nil
	}
	return c.Conn.Write(b)
}

// Read drops everything once the armed request went, until the connection is cut.
func (c *lossyConn) Read(b []byte) (int, error) {
	for {
		n, err := c.Conn.Read(b)
		c.mu.Lock()
		deaf := c.isDeaf
		c.mu.Unlock()
		if !deaf || err != nil {
			return n, err
		}
	}
}

func (f Loss) String() string {
	return map[Loss]string{none: "none", LoseReply: "reply lost", LoseRequest: "request lost", interfere: "interfered"}[f]
}
