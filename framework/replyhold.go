package framework

import (
	"encoding/binary"
	"io"
	"net"
	"time"
)

// Holding replies back, in race builds only, for go-zookeeper/zk#35.
//
// On every reconnect, go-zookeeper v1.0.4 reads the last zxid it saw to re-set its
// watches (Conn.sendSetWatches, on its connecting goroutine) while its receive loop
// may already be recording the zxid of a reply on the new connection: requests sent
// the moment the session is back get their replies that early. The race is harmless
// (a stale zxid only makes the server fire a watch again) but the race detector fails
// any test binary that meets it, so a test that reconnects with watches set could
// fail by chance.
//
// go-zookeeper builds its SetWatches request after that read and sends it on its send
// loop, so in race builds a connection that may have watches to re-set holds back
// every reply that would make the receive loop record a zxid (a reply to a request,
// with a zxid) until SetWatches has been written: the read then happens before the
// write. Other packets pass: watch notifications, pings, and the reply to the
// credentials go-zookeeper re-sends, and waits for, before its send loop starts
// (ZooKeeper answers those with zxid 0). When every watch had fired no SetWatches
// comes; the hold then ends after replyHoldLimit, or a quarter of the session timeout
// if that is shorter, so that go-zookeeper's read deadline (two thirds of it) is
// never missed. Built without -race, none of this runs.
const replyHoldLimit = 500 * time.Millisecond

// ZooKeeper's opcodes, as the requests on the wire carry them.
const (
	opcodeExists       = 3
	opcodeGetData      = 4
	opcodeGetChildren  = 8
	opcodeGetChildren2 = 12
	opcodeSetWatches   = 101
)

// replyHeader is a reply's length and header: length, xid, zxid.
const replyHeader = 4 + 4 + 8

// replyHold is the hold of one connection. The zero value holds nothing.
type replyHold struct {
	released chan struct{} // closed once SetWatches was written; nil: nothing held
	writes   int           // requests written; the first is the connect request
	// The readers' side (go-zookeeper's connecting goroutine, then its receive loop):
	got     int     // bytes read
	size    [4]byte // the connect response's length, its first four bytes
	over    bool    // the hold has ended
	left    int     // bytes of the current reply not yet handed to go-zookeeper
	pending []byte  // bytes read ahead of go-zookeeper
}

// newReplyHold holds replies back on a connection of h if an earlier one may have
// left watches for go-zookeeper to re-set.
func newReplyHold(h *handle) replyHold {
	if !holdReplies || !h.watched.Load() {
		return replyHold{}
	}
	return replyHold{released: make(chan struct{})}
}

// wrote looks at a request go-zookeeper writes: one that sets a watch marks the
// handle, and SetWatches ends the hold.
func (r *replyHold) wrote(h *handle, p []byte) {
	if !holdReplies {
		return
	}
	r.writes++
	if r.writes == 1 || len(p) < 12 { // the connect request has no opcode
		return
	}
	switch int32(binary.BigEndian.Uint32(p[8:12])) {
	case opcodeExists, opcodeGetData, opcodeGetChildren, opcodeGetChildren2:
		// The path, then the watch flag.
		if len(p) >= 16 {
			if end := 16 + int(binary.BigEndian.Uint32(p[12:16])); end >= 16 && end < len(p) && p[end] != 0 {
				h.watched.Store(true)
			}
		}
	case opcodeSetWatches:
		if r.released != nil {
			select {
			case <-r.released:
			default:
				close(r.released)
			}
		}
	}
}

// holding says whether reads go through readHeld: until the hold ends, once the
// connect response has been read to its end.
func (r *replyHold) holding() bool {
	if !holdReplies || r.released == nil || r.over {
		return len(r.pending) > 0
	}
	return r.got >= len(r.size) && r.got >= len(r.size)+int(binary.BigEndian.Uint32(r.size[:]))
}

// readHeld reads for go-zookeeper's receive loop while the hold lasts: at the start of
// each reply it reads the reply's header ahead and, if the reply carries a zxid,
// waits for the hold to end before handing it on.
func (r *replyHold) readHeld(h *handle, conn net.Conn, b []byte) (int, error) {
	if len(r.pending) == 0 && !r.over && r.left == 0 {
		head := make([]byte, replyHeader)
		if n, err := io.ReadFull(conn, head); err != nil {
			r.over = true
			if n == 0 {
				return 0, err
			}
			r.pending = head[:n] // hand over what came; go-zookeeper sees the error next
			return r.handOut(b), nil
		}
		r.pending = head
		r.left = 4 + int(binary.BigEndian.Uint32(head[:4]))
		xid, zxid := int32(binary.BigEndian.Uint32(head[4:8])), int64(binary.BigEndian.Uint64(head[8:16]))
		if xid >= 0 && zxid > 0 {
			r.wait(h)
		}
	}
	if len(r.pending) > 0 {
		return r.handOut(b), nil
	}
	if !r.over && len(b) > r.left {
		b = b[:r.left] // the next reply's header is read ahead in turn
	}
	n, err := conn.Read(b)
	r.left = max(r.left-n, 0)
	return n, err
}

func (r *replyHold) handOut(b []byte) int {
	n := copy(b, r.pending)
	r.pending = r.pending[n:]
	r.left = max(r.left-n, 0)
	return n
}

// wait holds a reply back until SetWatches was written, the limit passed or the
// handle closed; the hold is then over.
func (r *replyHold) wait(h *handle) {
	r.over = true
	limit := replyHoldLimit
	if s := time.Duration(h.negotiated.Load()); s > 0 {
		limit = min(limit, s/4)
	}
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case <-r.released:
	case <-timer.C:
	case <-h.ctx.Done():
	}
}

// read counts the bytes read: the connect response, which go-zookeeper's connecting
// goroutine reads to its last byte and no further, comes before any reply.
func (r *replyHold) read(p []byte) {
	if !holdReplies || r.released == nil {
		return
	}
	if r.got < len(r.size) {
		copy(r.size[r.got:], p)
	}
	r.got += len(p)
}
