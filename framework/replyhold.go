package framework

import (
	"encoding/binary"
	"time"
)

// Holding replies back, in race builds only, for go-zookeeper/zk#35.
//
// On every reconnect, go-zookeeper v1.0.4 reads the last zxid it saw to re-set its
// watches (Conn.sendSetWatches) while its receive loop may already be recording the
// zxid of a reply on the new connection: requests sent the moment the session is
// back get their replies that early. The race is harmless (a stale zxid only makes
// the server fire a watch again) but the race detector fails any test binary that
// meets it, so a test that reconnects with watches set could fail by chance.
//
// go-zookeeper builds its SetWatches request after that read and sends it on its
// send loop, so in race builds a connection that may have watches to re-set holds
// back its replies until it has written SetWatches: the read then happens before the
// write. When every watch had fired no SetWatches comes; the hold ends after
// replyHoldLimit instead. Built without -race, none of this code runs.
const replyHoldLimit = 500 * time.Millisecond

// ZooKeeper's opcodes, as the requests on the wire carry them.
const (
	opcodeExists       = 3
	opcodeGetData      = 4
	opcodeGetChildren  = 8
	opcodeGetChildren2 = 12
	opcodeSetAuth      = 100
	opcodeSetWatches   = 101
)

// replyHold is the hold of one connection. The zero value holds nothing.
type replyHold struct {
	released chan struct{} // nil when the connection holds nothing back
	writes   int           // requests written; the first is the connect request
	got      int           // bytes read
	size     [4]byte       // the connect response's length, its first four bytes
	waited   bool          // the receive loop has waited (the readers' goroutines only)
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
// handle, and SetWatches ends the hold. So does SetAuth, which go-zookeeper re-sends
// before its send loop starts and waits for: its reply must come through.
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
	case opcodeSetWatches, opcodeSetAuth:
		if r.released != nil {
			select {
			case <-r.released:
			default:
				close(r.released)
			}
		}
	}
}

// read counts what was read: the connect response, which go-zookeeper's connecting
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

// wait holds the receive loop's first read back until the hold ends.
func (r *replyHold) wait(h *handle) {
	if !holdReplies || r.released == nil || r.waited ||
		r.got < len(r.size) || r.got < len(r.size)+int(binary.BigEndian.Uint32(r.size[:])) {
		return
	}
	r.waited = true
	limit := time.NewTimer(replyHoldLimit)
	defer limit.Stop()
	select {
	case <-r.released:
	case <-limit.C:
	case <-h.ctx.Done():
	}
}
