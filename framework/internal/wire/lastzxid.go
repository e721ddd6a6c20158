package wire

import (
	"reflect"
	"unsafe"

	"github.com/go-zookeeper/zk"
)

// go-zookeeper's last zxid. go-zookeeper records the zxid of every reply it reads
// (Conn.lastZxid) and sends it when it connects again: a server that has seen less
// refuses the connection, so that a client never reads an older state than it has
// already seen (one of its own writes gone, on a follower that lags), and SetWatches
// asks with it for what changed since. The replies to the framework's own calls
// (calls.go) never reach go-zookeeper, so the connection records their zxids in that
// field itself, as go-zookeeper would have: on go-zookeeper's receive loop, the one
// goroutine that reads the connection and writes the field, and in race builds
// only once the reply hold allows (replyhold.go), as go-zookeeper's replies.
//
// The field is unexported, found by reflection as go-zookeeper's request counter is.
// A go-zookeeper that renamed or retyped it fails safe: the framework then makes
// none of its own calls (Handle.Direct), and sends every request through
// go-zookeeper, as before; TestGoZookeepersFieldsAreFound fails on that version.

// goZookeeperLastZxid finds go-zookeeper's last zxid in conn; nil if this version of
// go-zookeeper has none.
func goZookeeperLastZxid(conn *zk.Conn) *int64 {
	v := reflect.ValueOf(conn).Elem()
	f := v.FieldByName("lastZxid")
	if !f.IsValid() || f.Kind() != reflect.Int64 {
		return nil
	}
	return (*int64)(unsafe.Pointer(f.UnsafeAddr()))
}

// Direct says whether the framework may make calls of its own on this handle's
// connections (calls.go): whether their zxids can be recorded as go-zookeeper's.
func (h *Handle) Direct() bool { return h.lastZxid.Load() != nil }

// sawZxid records zxid, the zxid of the reply to a call of the framework's own, as
// go-zookeeper's last; on go-zookeeper's receive loop.
func (h *Handle) sawZxid(zxid int64) {
	if p := h.lastZxid.Load(); p != nil && zxid > 0 {
		*p = zxid
	}
}
