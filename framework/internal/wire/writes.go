package wire

import (
	"encoding/binary"
	"fmt"
	"net"
	"time"

	"github.com/go-zookeeper/zk"
)

// Writing. go-zookeeper writes each of its packets in one Write call, with a write
// deadline it sets just before. The framework's own packets (AddWatch, SetWatches2,
// RemoveWatches) go between go-zookeeper's, never inside one, each batch with a
// deadline of its own (Config.Handshake), after which go-zookeeper's deadline is set
// again. A failed write of ours ends the connection: a packet half written leaves
// the stream unreadable to the server, and go-zookeeper connects again.
//
// The gate. Nothing of the framework's is written on a connection before the
// connection's credentials have been answered: a server that enforces
// authentication refuses any other request first (-124) and drops the connection.
// Until then the framework's packets wait in a queue, in order; the gate opens, and
// the queue is written on a goroutine of its own (never the reader's), once the
// server has accepted Config.Credentials setAuth requests on the connection:
// go-zookeeper's re-sent ones on a reconnect, or the client's own on a new handle.
//
// A SASL login (sasl.go) runs before all of it, before go-zookeeper even has the
// connect response: the gate opens as it does without one, after the login.

// Write sends one of go-zookeeper's packets (it writes each in one call), and after
// it, on 3.8, what keeps a persistent watch on a path where the packet set a
// one-shot watch (watches.go).
//
// While the handle closes, a write never fails: go-zookeeper v1.0.4 answers a
// request whose write failed, and again when it flushes its requests, and a request
// queued as its Close began (its own SetWatches after a reconnect, say) has had an
// answer already: the third fills the two-slot channel nobody reads any more, and
// blocks go-zookeeper's loop, and Client.Close with it, for good (seen in a chaos run
// on 3.8). A write that fails then is taken as sent: its request is answered once,
// when go-zookeeper flushes.
func (t *Conn) Write(b []byte) (int, error) {
	n, err := t.write(b)
	if err != nil && t.h.cfg.Ctx.Err() != nil {
		return len(b), nil
	}
	return n, err
}

func (t *Conn) write(b []byte) (int, error) {
	xid, opcode, path, watch := requestPath(b)
	switch {
	case opcode == opcodeSetAuth:
		t.wroteCredentials(xid, b)
	case t.answered && (watch || opcode == opcodeSetWatches):
		switch {
		case watch:
			t.h.oneShots.wrote(xid, opcode, path)
		case t.h.xids.since(xid): // not a SetWatches an earlier connection left queued
			t.hold.wroteSetWatches()
		}
		return t.h.cfg.Watches.afterOneShot(t, b, path, opcode)
	}
	var c *Create
	if isCreate(opcode) {
		c = t.h.cfg.Creates.writing(xid, b)
	}
	n, err := t.send(b)
	if err == nil {
		c.wrote()
	}
	return n, err
}

// SetWriteDeadline is go-zookeeper's deadline for its next write; it is kept, to be
// set again after a write of the framework's own.
func (t *Conn) SetWriteDeadline(d time.Time) error {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	t.goDeadline = d
	return t.setWriteDeadline(d)
}

// setWriteDeadline sets the connection's write deadline, and notes it. wmu is held.
func (t *Conn) setWriteDeadline(d time.Time) error {
	t.deadline = d
	return t.Conn.SetWriteDeadline(d)
}

// send writes first, a packet of go-zookeeper's (nil: none), then the framework's
// own packets ours, or queues those until the gate opens.
func (t *Conn) send(first []byte, ours ...[]byte) (int, error) {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	n := 0
	if first != nil {
		var err error
		if n, err = t.Conn.Write(first); err != nil {
			return n, err
		}
	}
	if t.open {
		t.writeOurs(ours)
	} else {
		t.queue = append(t.queue, ours...)
	}
	return n, nil
}

// writeOurs writes the framework's packets ps with a deadline of their own, and ends
// the connection if that fails. wmu is held.
func (t *Conn) writeOurs(ps [][]byte) {
	if len(ps) == 0 {
		return
	}
	// go-zookeeper sets a deadline before each of its writes and clears it after, so
	// between them ours may stand: it is set again only when it would leave less than
	// half of Config.Handshake, and go-zookeeper's put back only where it had one (a
	// deadline set, its write still to come). Two deadline changes per request were
	// 2% of a contended lock's client CPU (bench -only mutex-8 -cpuprofile).
	now := time.Now()
	if !t.goDeadline.IsZero() || t.deadline.Sub(now) < t.h.cfg.Handshake/2 {
		_ = t.setWriteDeadline(now.Add(t.h.cfg.Handshake))
	}
	if !t.goDeadline.IsZero() {
		defer func() { _ = t.setWriteDeadline(t.goDeadline) }()
	}
	var creates []*Create
	for _, p := range ps {
		if xid, opcode := int32(binary.BigEndian.Uint32(p[4:])), int32(binary.BigEndian.Uint32(p[8:])); isCreate(opcode) {
			if c := t.h.cfg.Creates.writing(xid, p); c != nil {
				creates = append(creates, c)
			}
		}
	}
	// One system call for the batch (writev on a TCP connection): a lock's create and
	// its listing, a watch and what keeps a persistent one on its path.
	var err error
	if len(ps) == 1 {
		_, err = t.Conn.Write(ps[0])
	} else {
		bufs := append(net.Buffers(nil), ps...) // WriteTo consumes its slice
		_, err = bufs.WriteTo(t.Conn)
	}
	if err != nil {
		t.h.cfg.Log.Warn("zkrecipes: a request of the framework's could not be written; dropping the connection",
			"server", t.addr, "error", err)
		_ = t.Conn.Close() // go-zookeeper sees the connection end, and connects again
		return
	}
	for _, c := range creates {
		c.wrote()
	}
}

// openGate lets the framework's packets through, the queued ones first, written on
// a goroutine of their own: it is called on the reader's goroutine.
func (t *Conn) openGate() {
	t.flushing.Add(1)
	go func() {
		defer t.flushing.Done()
		t.wmu.Lock()
		defer t.wmu.Unlock()
		if t.open {
			return
		}
		t.open = true
		t.writeOurs(t.queue)
		t.queue = nil
	}()
}

// wroteCredentials notes go-zookeeper's setAuth request xid, packet b: its answer
// opens the gate, or says what the server refused.
func (t *Conn) wroteCredentials(xid int32, b []byte) {
	r := reader{b: b[min(12, len(b)):]}
	r.int() // type
	scheme := r.str()
	t.amu.Lock()
	defer t.amu.Unlock()
	if t.auths == nil {
		t.auths = map[int32]string{}
	}
	t.auths[xid] = scheme
}

// ZooKeeper's codes for what it refuses about credentials.
const (
	codeAuthFailed          = -115
	codeSessionRequiresAuth = -124
)

// refusedForAuth records a reply's code that says the session must authenticate
// first, go-zookeeper's reply or the framework's, for the client to report.
func (t *Conn) refusedForAuth(code int32) {
	if code == codeSessionRequiresAuth {
		t.h.refuse(fmt.Errorf("%s refused a request: the session requires authentication (ZooKeeper's %d); give the client credentials", t.addr, code))
	}
}

// answeredRequest notes go-zookeeper's reply to xid, with its code: the answer to
// credentials opens the gate once enough were accepted, and a refusal is recorded
// for the client to report (Handle.Refused).
func (t *Conn) answeredRequest(xid, code int32) {
	t.h.oneShots.replied(xid, code)
	t.refusedForAuth(code)
	t.amu.Lock()
	scheme, ok := t.auths[xid]
	delete(t.auths, xid)
	if ok && code == 0 {
		t.accepted++
	}
	ready := ok && code == 0 && t.accepted == t.h.cfg.Credentials
	t.amu.Unlock()
	switch {
	case ready:
		t.h.refused.Store(nil)
		t.openGate()
	case ok && code == codeAuthFailed:
		t.h.refuse(fmt.Errorf("%s refused the client's %q credentials (ZooKeeper's %d): %w", t.addr, scheme, code, zk.ErrAuthFailed))
	case ok && code != 0:
		t.h.refuse(fmt.Errorf("%s refused the client's %q credentials with ZooKeeper's error %d", t.addr, scheme, code))
	}
}

// request writes a request of the framework's own, packet p (see newRequest: its
// length and xid are written here), through the gate, and returns the channel its
// reply comes on, closed without one if the connection ends first. A caller whose
// requests about a path must reach the server in order (the persistent watches)
// holds its own lock around it: requests are written in the order they are made.
func (t *Conn) request(p jute) <-chan Reply {
	ch, _, ok := t.call(p)
	if ok {
		_, _ = t.send(nil, p) // a failure ends the connection, and ch
	}
	return ch
}

// call numbers the request packet p (see newRequest) and waits for its reply, which
// comes on the channel returned, closed without one if the connection ends first;
// the caller sends p, unless the connection has ended already (!ok): then p is left
// unnumbered, and the channel closed.
func (t *Conn) call(p jute) (<-chan Reply, int32, bool) {
	ch := make(chan Reply, 1)
	t.cmu.Lock()
	if t.ended {
		t.cmu.Unlock()
		close(ch)
		return ch, 0, false
	}
	t.xids++
	xid := ourXid(t.xids)
	if t.calls == nil {
		t.calls = map[int32]chan Reply{}
	}
	t.calls[xid] = ch
	t.cmu.Unlock()
	binary.BigEndian.PutUint32(p, uint32(len(p)-4))
	binary.BigEndian.PutUint32(p[4:], uint32(xid))
	return ch, xid, true
}

// ignored is a request of the framework's own whose reply nobody waits for.
func (t *Conn) ignored(opcode int32, body []byte) []byte {
	t.cmu.Lock()
	t.xids++
	xid := ourXid(t.xids)
	t.cmu.Unlock()
	return frame(xid, opcode, body)
}
