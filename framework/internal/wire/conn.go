package wire

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// Conn is one connection to a server, as go-zookeeper sees it, with the framework
// between them (see the package's doc). It also bounds the wait for the connect
// response: go-zookeeper allows ten receive timeouts for it (and none at all once
// its first bytes came), and a server caught starting up can accept a connection and
// never answer, which would hold the client for minutes instead of moving to the
// next try. A connection that fails before the response is told to Config.Failed.
type Conn struct {
	net.Conn
	h    *Handle
	addr string
	host string // the server's host as written in the server list (a SASL login's)

	// The reader's (go-zookeeper's connecting goroutine, then its receive loop).
	in       *bufio.Reader // the server's bytes, read ahead (see readBuffer)
	size     [4]byte       // a packet's length, as read (a local would escape to the heap)
	answered bool          // the connect response has been read
	got      int           // bytes read, counted until the connect response's length is read
	pending  []byte        // what go-zookeeper has yet to read of the current packet, read ahead
	left     int           // bytes of go-zookeeper's current reply it has yet to read from in
	// fire is a notification for the data watches of ours (watchcalls.go), handed to
	// them once go-zookeeper has taken it in (the next Read): see Read.
	fire   notification
	firing bool
	buf    []byte // the packets read whole: the connect response, notifications, ours
	spare  spareBody
	hold   replyHold

	established atomic.Bool   // the connect response came, with a session
	closed      chan struct{} // closed when reading ends or the connection is closed
	closeOnce   sync.Once

	// Writing: one packet at a time, under wmu (writes.go).
	wmu        sync.Mutex
	goDeadline time.Time // go-zookeeper's write deadline, restored after ours
	deadline   time.Time // the connection's write deadline, as last set
	open       bool      // the framework's own packets are written now, not queued
	queue      [][]byte  // the framework's own packets, until the gate opens
	flushing   sync.WaitGroup

	// The credentials on this connection (writes.go): go-zookeeper's setAuth
	// requests by xid, with their scheme, and how many the server accepted.
	amu      sync.Mutex
	auths    map[int32]string
	accepted int

	// The framework's own requests waiting for their replies.
	cmu   sync.Mutex
	calls map[int32]chan Reply
	xids  uint32
	ended bool // reading ended: no reply will come
	// A batch's replies handed out together (handOutAfter): the reply to a key of
	// after waits, in held, for the reply to its value.
	after map[int32]int32
	held  map[int32]heldReply

	watches dataWatches // the framework's own one-shot watches (watchcalls.go)
}

// Reply is the reply to one of the framework's own requests.
type Reply struct {
	Zxid int64
	Code int32
	Body []byte

	buf      *[]byte    // Body's buffer, to give back to spare (bodies.go)
	spare    *spareBody // the connection's
	tooLarge error      // why the reply was dropped, for Code codeTooLarge
}

// SetReadDeadline is go-zookeeper's, bounded by Config.Handshake until the connect
// response has come.
func (t *Conn) SetReadDeadline(d time.Time) error {
	if !t.answered {
		if limit := time.Now().Add(t.h.cfg.Handshake); d.IsZero() || d.After(limit) {
			d = limit
		}
	}
	return t.Conn.SetReadDeadline(d)
}

func (t *Conn) Close() error {
	t.end()
	err := t.Conn.Close()
	t.flushing.Wait() // its writes fail now
	return err
}

// Open says whether the connection has a session and still reads: a request of
// the framework's written on it now is answered, or fails when it ends.
func (t *Conn) Open() bool {
	select {
	case <-t.closed:
		return false
	default:
		return t.established.Load()
	}
}

// end fails the framework's requests waiting for a reply: none will come.
func (t *Conn) end() {
	t.closeOnce.Do(func() {
		close(t.closed)
		t.cmu.Lock()
		t.ended = true
		calls, held := t.calls, t.held
		t.calls, t.held, t.after = nil, nil, nil
		t.cmu.Unlock()
		for _, h := range held {
			h.ch <- h.r // came: handed out, though the request it waited for has no reply
		}
		for _, ch := range calls {
			close(ch)
		}
		t.watches.end()
	})
}

// Read hands go-zookeeper what it is to see of the server's packets: the connect
// response, notifications, pings' and its own replies, never the framework's. A
// connection that ends before its connect response is told to Config.Failed.
func (t *Conn) Read(b []byte) (int, error) {
	for len(t.pending) == 0 && t.left == 0 {
		// go-zookeeper reads the next packet only once it has handled the last: a
		// notification has reached the client's subscribers (Client.OnWatchEvent),
		// where a lock's holder hears its node's deletion, before a waiter of the
		// same client, woken by its watch on that node, can be granted the lock.
		if t.firing {
			t.firing = false
			t.watches.fired(t.fire.typ, t.fire.state, t.fire.path)
		}
		if err := t.readPacket(); err != nil {
			if !t.answered {
				t.h.cfg.Failed(t.addr, t.got, err)
			}
			t.end()
			return 0, err
		}
	}
	if len(t.pending) > 0 {
		n := copy(b, t.pending)
		t.pending = t.pending[n:]
		return n, nil
	}
	// The body of a reply to go-zookeeper, into go-zookeeper's own buffer. A buffer of
	// ours for it would be kept at the size of the largest reply, each connection's (a
	// lock's listing of its waiters: 1.3 KB a waiter, with twenty sessions queued).
	n, err := t.in.Read(b[:min(len(b), t.left)])
	t.left -= n
	if err != nil {
		t.end()
	}
	return n, err
}

// ErrPacketTooLarge is the error of a connection whose server sent a packet larger
// than the client's maximum (WithMaxPacketSize): the connection is dropped, as the
// Java client drops it, and a reply too large is the failure of its request.
var ErrPacketTooLarge = errors.New("framework: packet from the server larger than the maximum packet size (WithMaxPacketSize)")

// readPacket reads the next packet and decides what go-zookeeper gets of it.
func (t *Conn) readPacket() error {
	got, err := io.ReadFull(t.in, t.size[:])
	size := t.size
	t.got += got
	if err != nil {
		return err
	}
	n := int(int32(binary.BigEndian.Uint32(size[:]))) // signed, as jute's lengths are
	if !t.answered {
		return t.readConnectResponse(size, n)
	}
	switch {
	case n < replyHeader-4:
		return t.drop(fmt.Errorf("%w: a packet of %d bytes from %s, shorter than a reply's header", ErrProtocol, n, t.addr))
	case n > t.h.cfg.MaxPacket:
		return t.tooLarge(n)
	}
	// The header first: go-zookeeper reads the body of a reply of its own.
	t.buf = append(t.buf[:0], size[:]...)
	p, err := t.fill(4, replyHeader-4)
	if err != nil {
		return err
	}
	hd, err := decodeHeader(p[4:])
	if err != nil {
		return t.drop(err)
	}
	if t.h.cfg.Zxid != nil {
		t.h.cfg.Zxid(hd.zxid) // before go-zookeeper has the reply: a Sync's zxid is known when it returns
	}
	switch {
	case hd.xid >= 0:
		return t.goReply(p, n-(replyHeader-4), hd.xid, hd.zxid, hd.code)
	case isOurXid(hd.xid):
		return t.ourReply(n-(replyHeader-4), hd)
	}
	// A notification or the reply to a ping: read whole.
	if p, err = t.fill(len(p), n); err != nil {
		return err
	}
	if hd.xid == xidNotification {
		ev, err := decodeNotification(p[replyHeader:])
		if err != nil {
			return t.drop(err)
		}
		t.h.oneShots.fired(ev.typ, ev.path)
		t.h.lasting.fired(ev.typ, ev.path)
		t.fire, t.firing = ev, true
		t.h.cfg.Watches.notify(t.h, ev.typ, ev.path, hd.zxid)
	}
	t.pending = p
	return nil
}

// ourReply reads the body of a reply to a request of ours, left bytes, into a
// buffer of the reply's own, or the spare (bodies.go): through t.buf, each
// connection would keep a buffer the size of the largest (a lock's listing of its
// waiters: 1 KB a waiter, with twenty sessions queued, in BENCHMARKS-scale.md's run
// of 2026-12-06). go-zookeeper never sees it.
func (t *Conn) ourReply(left int, hd header) error {
	var body []byte
	var buf *[]byte
	if left > 0 {
		body, buf = t.spare.body(left)
		if err := t.readFull(body); err != nil {
			return err
		}
	}
	if hd.zxid > 0 {
		// go-zookeeper's last zxid, as its own replies set it (lastzxid.go)
		if t.hold.holding() && !t.hold.wait(t.h, t.closed) {
			return net.ErrClosed
		}
		t.h.sawZxid(hd.zxid)
	}
	t.h.cfg.Creates.replied(hd.xid, hd.zxid, hd.code)
	t.refusedForAuth(hd.code)
	t.watches.replied(hd.xid, hd.code)
	r := Reply{Zxid: hd.zxid, Code: hd.code, Body: body}
	if buf != nil {
		r.buf, r.spare = buf, &t.spare
	}
	t.reply(hd.xid, r)
	return nil
}

// drop logs err, which ends the connection.
func (t *Conn) drop(err error) error {
	t.h.cfg.Log.Error("zkrecipes: dropping the connection", "error", err)
	return err
}

// readConnectResponse reads the connect response whose length n was read as size,
// whole, and hands it on to go-zookeeper once it has checked it.
func (t *Conn) readConnectResponse(size [4]byte, n int) error {
	if n < minConnectResponse || n > t.h.cfg.MaxPacket {
		return t.drop(t.notZooKeeper(size, n))
	}
	t.buf = append(t.buf[:0], size[:]...)
	p, err := t.fill(4, n)
	if err != nil {
		return err
	}
	m, err := decodeConnectResponse(p[4:])
	if err != nil {
		return t.drop(fmt.Errorf("%s: %w", t.addr, err))
	}
	t.answered = true
	if m.session != 0 && t.h.cfg.SASL != nil {
		if err := t.login(); err != nil { // sasl.go
			return err
		}
	}
	t.connected(m)
	t.pending = p
	return nil
}

// notZooKeeper is the error of a server whose first bytes, size, cannot begin a
// connect response: they read as a length of n. It quotes what the server sent,
// as much as came at once, and says what it seems to be.
func (t *Conn) notZooKeeper(size [4]byte, n int) error {
	first := make([]byte, 64)
	copy(first, size[:])
	more, _ := t.in.Read(first[4:])
	first = first[:4+more]
	var cause error = ErrProtocol
	if n > t.h.cfg.MaxPacket {
		cause = fmt.Errorf("%w: %d bytes from %s, more than %d", ErrPacketTooLarge, n, t.addr, t.h.cfg.MaxPacket)
	}
	seems := ""
	switch {
	case bytes.HasPrefix(first, []byte("HTTP/")):
		seems = " (an HTTP server?)"
	case len(first) >= 2 && (first[0] == 0x15 || first[0] == 0x16) && first[1] == 0x03:
		seems = " (a TLS port? use WithTLS)"
	}
	return fmt.Errorf("%s did not answer as ZooKeeper does%s: it sent %q, a connect response of %d bytes if it were: %w",
		t.addr, seems, truncated(first), n, cause)
}

// fill reads the packet whose first have bytes (its length's four included) are in
// t.buf on to its first 4+m bytes, and returns them.
func (t *Conn) fill(have, m int) ([]byte, error) {
	if cap(t.buf) < 4+m {
		t.buf = append(make([]byte, 0, 4+m), t.buf[:have]...)
	}
	p := t.buf[:4+m]
	return p, t.readFull(p[have:])
}

// readFull reads p whole from the server.
func (t *Conn) readFull(p []byte) error {
	_, err := io.ReadFull(t.in, p)
	return err
}

// readBuffer is the size of a connection's read-ahead buffer. Reading a packet's
// length, its header and its body one system call each, as go-zookeeper and the
// header's check ask for them, costs three calls a packet; read ahead, a burst of
// small packets (a reply, a notification) costs one. A body larger than what is
// buffered is read straight into go-zookeeper's buffer, so that no copy of a large
// reply is kept; the buffer stays this size.
const readBuffer = 4 << 10

// stamped is the connection as its read-ahead buffer reads it: it notes when a
// server last sent anything, as the bytes arrive, not as they are taken from the
// buffer.
type stamped struct {
	net.Conn
	h *Handle
}

func (s stamped) Read(p []byte) (int, error) {
	n, err := s.Conn.Read(p)
	if n > 0 {
		s.h.lastRead.Store(time.Now().UnixNano())
	}
	return n, err
}

// goReply hands go-zookeeper the reply to its request xid whose header is p, with
// left bytes of its body still on the connection for go-zookeeper to read. A reply
// to hold (replyhold.go) is read whole first, so that go-zookeeper's read deadline
// does not run while it waits.
func (t *Conn) goReply(p []byte, left int, xid int32, zxid int64, code int32) error {
	if zxid > 0 && t.hold.holding() {
		whole := append(make([]byte, 0, len(p)+left), p...)[:len(p)+left]
		if err := t.readFull(whole[len(p):]); err != nil {
			return err
		}
		p, left = whole, 0
		if !t.hold.wait(t.h, t.closed) {
			return net.ErrClosed // go-zookeeper never sees the reply, nor sets its watch
		}
	}
	t.answeredRequest(xid, code)
	t.h.cfg.Creates.replied(xid, zxid, code)
	t.pending, t.left = p, left
	return nil
}

// codeTooLarge is the error code go-zookeeper is handed in place of a reply too large
// to read: ZooKeeper's APIERROR, the base of its range of API errors, which no
// server sends, and which go-zookeeper turns into its own zk.ErrAPIError. Handle
// .ReplyError tells the request's caller why, by that error's identity.
const codeTooLarge = -100

// tooLarge skips a packet of n bytes that is too large to read, and hands
// go-zookeeper, for a reply, a reply of its own that fails the request. A
// notification too large ends the connection: skipped, it would leave waiters
// unwoken and the record of one-shot watches stale, where a new connection sets
// every watch again (go-zookeeper's SetWatches, and a Reset for the persistent ones).
func (t *Conn) tooLarge(n int) error {
	tooLarge := fmt.Errorf("%w: %d bytes from %s, more than %d", ErrPacketTooLarge, n, t.addr, t.h.cfg.MaxPacket)
	var head [replyHeader - 4]byte
	if _, err := io.ReadFull(t.in, head[:]); err != nil {
		return err
	}
	hd, _ := decodeHeader(head[:])
	if !isOurXid(hd.xid) && hd.xid < 0 {
		return t.drop(fmt.Errorf("a notification too large: %w", tooLarge))
	}
	if _, err := io.CopyN(io.Discard, t.in, int64(n-len(head))); err != nil {
		return err
	}
	t.h.cfg.Log.Warn("zkrecipes: a reply too large was dropped", "error", tooLarge)
	if isOurXid(hd.xid) {
		t.reply(hd.xid, Reply{Code: codeTooLarge, tooLarge: tooLarge})
		return nil
	}
	t.h.tooLarge.Store(&tooLarge)
	t.h.oneShots.replied(hd.xid, codeTooLarge)
	t.pending = jute(nil).int(replyHeader - 4).int(hd.xid).long(0).int(codeTooLarge)
	return nil
}

// connected takes in the connect response: the session timeout granted and whether
// the session is there; on a session that is, the persistent watches are set again.
func (t *Conn) connected(m connectResponse) {
	if m.timeoutMs > 0 {
		t.h.negotiated.Store(int64(time.Duration(m.timeoutMs) * time.Millisecond))
	}
	t.h.cfg.Answered()
	t.hold.begin(t.h.oneShots.connected(m.session == 0))
	if m.session == 0 {
		t.h.lasting.expired()
		// Expired: go-zookeeper gives this session up and connects again for a new
		// one, leaving this connection open and unread (v1.0.4's loop closes it only
		// on other errors). Ended here, it fails what of ours waits on it, and its
		// socket is not left behind; go-zookeeper has the response, read whole.
		t.end()
		_ = t.Conn.Close()
		return
	}
	t.established.Store(true)
	// Queued, the gate being shut: the lasting watches first, so that on 3.8 a
	// persistent watch on the same path replaces them, as after a one-shot watch.
	t.h.lasting.setAgain(t)
	t.h.cfg.Watches.connected(t)
	if t.h.cfg.Credentials == 0 {
		t.openGate()
	}
}

// reply hands a reply to the request waiting for it, unless it is to wait for a
// later one's (handOutAfter); with a reply, those that waited for it.
func (t *Conn) reply(xid int32, r Reply) {
	t.cmu.Lock()
	ch := t.calls[xid]
	delete(t.calls, xid)
	if last, ok := t.after[xid]; ok {
		delete(t.after, xid)
		if _, waiting := t.calls[last]; waiting && ch != nil {
			t.held[last] = heldReply{ch, r}
			t.cmu.Unlock()
			return
		}
	}
	h, released := t.held[xid]
	delete(t.held, xid)
	t.cmu.Unlock()
	if ch != nil {
		ch <- r
	}
	if released {
		h.ch <- h.r
	}
}

// heldReply is a reply not handed out yet, and its channel.
type heldReply struct {
	ch chan Reply
	r  Reply
}

// handOutAfter makes the reply to first wait for the reply to last, both requests of
// ours written in one batch, then handed out last's first: a caller that waits on
// first's and then reads last's is woken once, not once a reply (a lock's create
// and its listing, a waiter's read and its setWatches). The server answers in order,
// so first's waits for no more than the rest of the batch, or the connection's end,
// which hands it out. Called before the batch is written.
func (t *Conn) handOutAfter(first, last int32) {
	t.cmu.Lock()
	defer t.cmu.Unlock()
	if t.ended {
		return
	}
	if t.after == nil {
		t.after, t.held = map[int32]int32{}, map[int32]heldReply{}
	}
	t.after[first] = last
}

// ErrConnectionLost is the error of a request of the framework's own whose
// connection ended before its reply: retryable, as go-zookeeper's own.
var ErrConnectionLost = fmt.Errorf("framework: the connection ended before the reply: %w", zk.ErrConnectionClosed)
