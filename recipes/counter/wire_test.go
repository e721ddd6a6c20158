package counter

import (
	"encoding/binary"
	"net"
	"sync"
	"time"
)

// faultyDialer connects to ZooKeeper for real and can lose one conditional write's
// answer at the worst moment, for the tests of what a lost reply means: the next
// SetData request either reaches the server (whose reply is then dropped) or is
// dropped itself, and from then on the connection hears nothing until cut.
type faultyDialer struct {
	mu      sync.Mutex
	action  wireFault
	before  func() // with interfere: runs just before the request goes
	conn    *faultyConn
	written chan struct{} // closed once the armed request went (or was dropped)
}

type wireFault int

const (
	none        wireFault = iota
	loseReply             // the server gets the request; its reply never comes back
	loseRequest           // the request never reaches the server
	interfere             // the request goes after a function of the test has run
)

// opSetData is ZooKeeper's opcode for SetData, after the length and the xid.
const opSetData = 5

func (d *faultyDialer) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.conn = &faultyConn{Conn: c, d: d}
	return d.conn, nil
}

// arm makes the next SetData suffer f; the channel closes when it has.
func (d *faultyDialer) arm(f wireFault) <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.action, d.written = f, make(chan struct{})
	return d.written
}

// before runs fn (which may arm again) just before the next SetData is sent.
func (d *faultyDialer) beforeNext(fn func()) <-chan struct{} {
	written := d.arm(interfere)
	d.mu.Lock()
	d.before = fn
	d.mu.Unlock()
	return written
}

// cut closes the current connection: go-zookeeper fails what awaits a reply with a
// connection loss and connects again.
func (d *faultyDialer) cut() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.conn != nil {
		_ = d.conn.Conn.Close()
	}
}

type faultyConn struct {
	net.Conn
	d      *faultyDialer
	mu     sync.Mutex
	isDeaf bool
}

func (c *faultyConn) Write(b []byte) (int, error) {
	c.d.mu.Lock()
	f := c.d.action
	if f == none || len(b) < 12 || binary.BigEndian.Uint32(b[8:12]) != opSetData {
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
	if f == loseRequest {
		return len(b), nil
	}
	return c.Conn.Write(b)
}

// Read drops everything once the armed request went, until the connection is cut.
func (c *faultyConn) Read(b []byte) (int, error) {
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

func (f wireFault) String() string {
	return map[wireFault]string{none: "none", loseReply: "reply lost", loseRequest: "request lost", interfere: "interfered"}[f]
}
