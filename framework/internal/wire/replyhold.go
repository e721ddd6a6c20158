package wire

import (
	"reflect"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/go-zookeeper/zk"
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
// this connection's SetWatches has been written: the read then happens before the
// write. Not an earlier connection's: go-zookeeper keeps the requests it had queued
// but not written when a connection broke, and writes them first on the next, so a
// SetWatches built for a connection cut before its send loop wrote it (a cut during
// the credentials' round trip, say) comes first on the next connection, before that
// connection's own SetWatches has read the zxid (the race detector caught it once in
// about 60 runs of TestReconnectWithWatchesAndRequestsInFlight on two busy cores).
// go-zookeeper numbers its requests as it queues them, and the connection notes the
// number go-zookeeper has reached when the session is back (hostProvider.Connected,
// called on go-zookeeper's connecting goroutine just before it reads the zxid; the
// counter is unexported, so it is found by reflection and read atomically): this
// connection's SetWatches is the first with a later number. An earlier one was
// numbered by the goroutine go-zookeeper starts to queue it right after its read;
// only a goroutine kept from running through a whole reconnect could number it
// later. Other packets
// pass: watch notifications, pings, the framework's own replies without a zxid (its
// calls' replies with one are held too: their zxid is recorded as go-zookeeper's,
// lastzxid.go), and the replies to
// the credentials go-zookeeper re-sends, and waits for, before its send loop starts
// (ZooKeeper answers those with zxid 0). A connection without watches to set holds
// nothing. The reply held has been read whole, so go-zookeeper's read deadlines are
// not at stake however long the hold lasts; a session timeout bounds it only against
// go-zookeeper changing its ways (a starved machine took more than two seconds to
// send SetWatches, with every goroutine runnable). Built without -race, none of this
// runs.

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
func (r *replyHold) wait(h *Handle, closed <-chan struct{}) bool {
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
		if h.cfg.Log != nil {
			h.cfg.Log.Debug("zkrecipes: go-zookeeper did not re-set its watches; replies held no longer")
		}
	case <-closed:
		return false
	case <-h.cfg.Ctx.Done():
		return false
	}
	return true
}

// goZookeeperXids finds go-zookeeper's request counter in conn, which it increments
// atomically to number each request it queues (Conn.nextXid, v1.0.4's field xid);
// nil if this version of go-zookeeper has none. It is read only, and atomically.
//
// The field is unexported, so a newer go-zookeeper, chosen by a user's other
// dependencies, may rename or retype it. Then this finds nothing, and fails safe: a
// hold ends at the first SetWatches written, an earlier connection's included (as
// before the counter was read), so the race detector may again see go-zookeeper
// #35 in a rare reconnect; a build without -race holds nothing anyway. It fails
// loud too: Handle.Follow logs an error, and TestGoZookeepersFieldsAreFound
// fails on the new version before a release can depend on it.
func goZookeeperXids(conn *zk.Conn) *uint32 { return uint32Field(conn, "xid") }

// uint32Field is the address of the uint32 field name of the struct p points to;
// nil if it has no such field.
func uint32Field(p any, name string) *uint32 {
	v := reflect.ValueOf(p)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	f := v.Elem().FieldByName(name)
	if !f.IsValid() || f.Kind() != reflect.Uint32 {
		return nil
	}
	return (*uint32)(unsafe.Pointer(f.UnsafeAddr()))
}

// xidsAtConnect is go-zookeeper's request count when its session was last back, or -1
// when not known.
type xidsAtConnect struct {
	counter atomic.Pointer[uint32] // go-zookeeper's, once known
	at      atomic.Int64
}

// connected notes go-zookeeper's count now, on its connecting goroutine just before it
// builds its SetWatches.
func (x *xidsAtConnect) connected() {
	if p := x.counter.Load(); p != nil {
		x.at.Store(int64(atomic.LoadUint32(p)))
		return
	}
	x.at.Store(-1)
}

// since says whether go-zookeeper numbered request xid after the session was last
// back. Its xids are its count masked to 31 bits, so the count's distance to the
// xid tells (a session sends far fewer than 2^30 requests between two connections).
func (x *xidsAtConnect) since(xid int32) bool {
	at := x.at.Load()
	if at < 0 {
		return true
	}
	d := (uint32(xid) - uint32(at)) & 0x7fffffff
	return d >= 1 && d < 1<<30
}
