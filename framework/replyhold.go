package framework

import (
	"time"
)

// Holding replies back, in race builds only, for go-zookeeper/zk#35.
//
// On every reconnect, go-zookeeper v1.0.4 reads the last zxid it saw to re-set its
// watches (Conn.sendSetWatches, on its connecting goroutine) while its receive loop
// may already be recording the zxid of a reply on the new connection: requests sent
// the moment the session is back get their replies that early. The race is harmless
// (a stale zxid only makes the server fire a watch again) but the race detector fails
// any test binary that meets it.
//
// go-zookeeper reads the zxid only when it has watches to set again, and then builds
// its SetWatches request after the read and sends it on its send loop. The connection
// knows exactly when that is (oneShots follows go-zookeeper's watches), so in race
// builds a new connection of a session with watches holds back every reply that
// would make the receive loop record a zxid (a reply to a request, with a zxid) until
// SetWatches has been written: the read then happens before the write. Other packets
// pass: watch notifications, pings, the framework's own replies, and the replies to
// the credentials go-zookeeper re-sends, and waits for, before its send loop starts
// (ZooKeeper answers those with zxid 0). A connection without watches to set holds
// nothing. The reply held has been read whole, so go-zookeeper's read deadlines are
// not at stake however long the hold lasts; a session timeout bounds it only against
// go-zookeeper changing its ways (a starved machine took more than two seconds to
// send SetWatches, with every goroutine runnable). Built without -race, none of this
// runs.

// ZooKeeper's opcodes of go-zookeeper's requests that the connection looks at.
const (
	opcodeExists       = 3
	opcodeGetData      = 4
	opcodeGetChildren  = 8
	opcodeGetChildren2 = 12
	opcodeSetWatches   = 101
)

// replyHold is the hold of one connection. The zero value holds nothing.
type replyHold struct {
	released chan struct{} // closed once SetWatches was written; nil: nothing held
	over     bool          // the reader's: the hold has ended
}

// begin starts holding, on the reader's goroutine once the connect response is read,
// if go-zookeeper has watches to set again.
func (r *replyHold) begin(watches bool) {
	if holdReplies && watches {
		r.released = make(chan struct{})
	}
}

// wroteSetWatches ends the hold: go-zookeeper has read its zxid. On the writer's
// goroutine; released was made before go-zookeeper could write anything but the
// connect request.
func (r *replyHold) wroteSetWatches() {
	if r.released == nil {
		return
	}
	select {
	case <-r.released:
	default:
		close(r.released)
	}
}

// holding says whether a reply with a zxid is to be held now (the reader's).
func (r *replyHold) holding() bool { return r.released != nil && !r.over }

// wait holds a reply with a zxid back until SetWatches was written or the guard's
// limit passed; the hold is then over. It reports false when the connection or the
// client closed first: the reply must then not reach go-zookeeper, whose connecting
// goroutine may be reading the zxid still (a credentials' round trip delays
// SetWatches, and a cut can come meanwhile). Its request fails as if the connection
// had been cut before the reply came.
func (r *replyHold) wait(h *handle, closed <-chan struct{}) bool {
	if r.released == nil || r.over {
		return true
	}
	r.over = true
	limit := time.Duration(h.negotiated.Load())
	if limit <= 0 {
		limit = time.Minute
	}
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case <-r.released:
	case <-timer.C:
		h.holdsGivenUp.Add(1)
		if h.log != nil {
			h.log.Debug("zkrecipes: go-zookeeper did not re-set its watches; replies held no longer")
		}
	case <-closed:
		return false
	case <-h.ctx.Done():
		return false
	}
	return true
}
