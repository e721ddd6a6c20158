package zkrtest

import (
	"encoding/binary"
	"io"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// FlightDialer connects to ZooKeeper for real (give its Dial to framework.WithDialer)
// and, once Hold is called, holds the server's answers back until the test lets
// them through, one flight at a time (Flight): so a test counts round trips, not
// only requests. A flight is what the client sends before it waits for an answer;
// requests sent one after the other, each waiting for the last's answer, are as
// many flights, and a test that expects them in one waits in vain for the second.
type FlightDialer struct {
	mu      sync.Mutex
	changed *sync.Cond
	conn    *flightConn
	holding bool
	sent    []int32 // the requests' opcodes since the last flight, pings left out
}

// NewFlightDialer makes a dialer that holds nothing until Hold.
func NewFlightDialer() *FlightDialer {
	d := &FlightDialer{}
	d.changed = sync.NewCond(&d.mu)
	return d
}

// flightConn is one connection: what the server sends is read into packets, and
// handed to the client up to released.
type flightConn struct {
	net.Conn
	d        *FlightDialer
	packets  [][]byte // read from the server, not yet handed to the client
	released int      // how many of packets the client may read
	unread   []byte   // the rest of a packet handed out in part
	err      error    // the server's stream ended
	wrote    bool     // the connect request went: what follows are requests
	answered bool     // the connect response came: what follows are replies
}

// Dial is a zk.Dialer.
func (d *FlightDialer) Dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	fc := &flightConn{Conn: c, d: d}
	d.mu.Lock()
	d.conn = fc
	d.mu.Unlock()
	go fc.readServer()
	return fc, nil
}

// Hold starts holding the server's answers: from now on only Flight lets them
// through. The connection must be up, its handshake over.
func (d *FlightDialer) Hold() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.holding, d.sent = true, nil
}

// Flight waits until the client has sent n requests (pings left out) since the
// last flight, lets their answers through, and returns the requests' opcodes (zk's
// protocol numbers: 1 create, 2 delete, 4 getData, 8 getChildren, 12 getChildren2...)
// in the order sent. A client that sends them over more than one round trip never
// reaches n: the test fails at the deadline.
func (d *FlightDialer) Flight(t testing.TB, n int) []int32 {
	t.Helper()
	deadline := time.AfterFunc(Wait, func() {
		d.mu.Lock()
		d.changed.Broadcast()
		d.mu.Unlock()
	})
	defer deadline.Stop()
	start := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	for len(d.sent) < n && time.Since(start) < Wait {
		d.changed.Wait()
	}
	require.GreaterOrEqual(t, len(d.sent), n, "requests sent in one flight: %v", d.sent)
	ops := d.sent[:n:n]
	d.sent = d.sent[n:]
	// Let through everything the server has answered up to its n-th answer to them.
	c := d.conn
	for answered := 0; answered < n && time.Since(start) < Wait; {
		answered = 0
		for i := c.released; i < len(c.packets); i++ {
			if xid := int32(binary.BigEndian.Uint32(c.packets[i][4:8])); isAnswer(xid) {
				answered++
				if answered == n {
					c.released = i + 1
					break
				}
			}
		}
		if answered < n {
			if c.err != nil {
				break
			}
			d.changed.Wait()
		}
	}
	d.changed.Broadcast()
	return ops
}

// isAnswer says whether a packet with xid is the answer to a request: go-zookeeper
// numbers its requests from 1 up, the framework its own from -2^16 down; the
// server's notifications (-1) and pings' answers (-2) are none.
func isAnswer(xid int32) bool { return xid > 0 || xid <= -(1<<16) }

// Notified waits for the server's next notification (a watch that fired) and lets
// it through, with what came before it.
func (d *FlightDialer) Notified(t testing.TB) {
	t.Helper()
	deadline := time.AfterFunc(Wait, func() {
		d.mu.Lock()
		d.changed.Broadcast()
		d.mu.Unlock()
	})
	defer deadline.Stop()
	start := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.conn
	for time.Since(start) < Wait && c.err == nil {
		for i := c.released; i < len(c.packets); i++ {
			if xid := int32(binary.BigEndian.Uint32(c.packets[i][4:8])); xid == -1 {
				c.released = i + 1
				d.changed.Broadcast()
				return
			}
		}
		d.changed.Wait()
	}
	t.Fatal("no notification came")
}

// Pending returns the requests sent since the last flight (pings left out).
func (d *FlightDialer) Pending() []int32 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.sent)
}

// Release stops holding: everything held and to come goes through.
func (d *FlightDialer) Release() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.holding = false
	if d.conn != nil {
		d.conn.released = len(d.conn.packets)
	}
	d.changed.Broadcast()
}

func (c *flightConn) Write(b []byte) (int, error) {
	c.d.mu.Lock()
	connect := !c.wrote
	c.wrote = true
	if c.d.holding && !connect && len(b) >= 12 {
		if op := int32(binary.BigEndian.Uint32(b[8:12])); op != opPing {
			c.d.sent = append(c.d.sent, op)
			c.d.changed.Broadcast()
		}
	}
	c.d.mu.Unlock()
	return c.Conn.Write(b)
}

// readServer reads the server's packets (a length, then the packet) as they come.
func (c *flightConn) readServer() {
	for {
		var size [4]byte
		_, err := io.ReadFull(c.Conn, size[:])
		var p []byte
		if err == nil {
			p = make([]byte, 4+binary.BigEndian.Uint32(size[:]))
			copy(p, size[:])
			_, err = io.ReadFull(c.Conn, p[4:])
		}
		c.d.mu.Lock()
		if err != nil {
			c.err = err
		} else {
			c.packets = append(c.packets, p)
			if !c.d.holding || !c.answered {
				c.released = len(c.packets) // the connect response is let through
			}
			c.answered = true
		}
		c.d.changed.Broadcast()
		c.d.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// Read hands the client what has been let through.
func (c *flightConn) Read(b []byte) (int, error) {
	c.d.mu.Lock()
	defer c.d.mu.Unlock()
	for len(c.unread) == 0 {
		if c.released > 0 {
			c.unread = c.packets[0]
			c.packets = c.packets[1:]
			c.released--
			break
		}
		if c.err != nil {
			return 0, c.err
		}
		c.d.changed.Wait()
	}
	n := copy(b, c.unread)
	c.unread = c.unread[n:]
	return n, nil
}

// Close closes the connection; a Read waiting for the server returns.
func (c *flightConn) Close() error {
	err := c.Conn.Close()
	c.d.mu.Lock()
	c.d.changed.Broadcast()
	c.d.mu.Unlock()
	return err
}
