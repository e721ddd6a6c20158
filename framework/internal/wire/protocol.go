package wire

import (
	"encoding/binary"
	"errors"
)

// The protocol's facts this package relies on are in doc.go.

// Opcodes of the requests the package writes or reads.
const (
	opcodeCreate          = 1
	opcodeCreate2         = 15
	opcodeCreateContainer = 19
	opcodeCreateTTL       = 21
	opcodeExists          = 3
	opcodeGetData         = 4
	opcodeGetChildren     = 8
	opcodeGetChildren2    = 12
	opcodeRemoveWatches   = 18
	opcodeSetAuth         = 100
	opcodeSetWatches      = 101
	opcodeSetWatches2     = 105
	opcodeAddWatch        = 106

	xidNotification = -1

	// What removeWatches removes.
	removePersistent          = 4
	removePersistentRecursive = 5
	removeAny                 = 3

	// ZooKeeper's error codes that the package reads itself.
	codeNoNode    = -101
	codeNoWatcher = -121
)

// CodeUnimplemented is ZooKeeper's error code for an opcode the server does not
// know: a server before 3.6 answers AddWatch and SetWatches2 with it.
const CodeUnimplemented = -6

// ourXid is the n-th xid of the framework's own requests: a negative range below the
// server's special xids (-1 to -8), which go-zookeeper never uses.
func ourXid(n uint32) int32 { return -(1 << 16) - int32(n&(1<<29-1)) }

// isOurXid says whether a reply's xid is in ourXid's range.
func isOurXid(xid int32) bool { return xid <= -(1<<16) && xid > -(1<<16)-(1<<29) }

// jute is a request being encoded: ZooKeeper's serialisation, big-endian, strings
// and vectors prefixed by their length.
type jute []byte

func (j jute) int(v int32) jute  { return binary.BigEndian.AppendUint32(j, uint32(v)) }
func (j jute) long(v int64) jute { return binary.BigEndian.AppendUint64(j, uint64(v)) }

func (j jute) str(s string) jute {
	j = j.int(int32(len(s)))
	return append(j, s...)
}

func (j jute) strs(ss []string) jute {
	j = j.int(int32(len(ss)))
	for _, s := range ss {
		j = j.str(s)
	}
	return j
}

// frame is a request packet: length, xid, opcode, then body.
func frame(xid, opcode int32, body []byte) []byte {
	p := make(jute, 4, 12+len(body))
	p = p.int(xid).int(opcode)
	p = append(p, body...)
	binary.BigEndian.PutUint32(p, uint32(len(p)-4))
	return p
}

// reader decodes a packet's fields; a short packet sets err and reads zeros.
type reader struct {
	b   []byte
	err error
}

var errShortPacket = errors.New("a packet from the server ends too soon")

func (r *reader) int() int32 {
	if len(r.b) < 4 {
		r.err = errShortPacket
		return 0
	}
	v := int32(binary.BigEndian.Uint32(r.b))
	r.b = r.b[4:]
	return v
}

func (r *reader) long() int64 {
	if len(r.b) < 8 {
		r.err = errShortPacket
		return 0
	}
	v := int64(binary.BigEndian.Uint64(r.b))
	r.b = r.b[8:]
	return v
}

func (r *reader) str() string { return string(r.raw()) }

// raw reads a string's bytes, unconverted: nil for jute's null string.
func (r *reader) raw() []byte {
	n := r.int()
	if n < 0 {
		return nil // jute's null string
	}
	if int(n) > len(r.b) {
		r.err = errShortPacket
		return nil
	}
	s := r.b[:n]
	r.b = r.b[n:]
	return s
}

// requestPath reads the opcode of a request packet go-zookeeper writes and, for the
// reads that may set a one-shot watch (exists, getData, getChildren, getChildren2),
// their watch flag and, if it is set, their path (a string is made only for a watch
// to note: go-zookeeper writes every read through here).
func requestPath(p []byte) (xid, opcode int32, path string, watch bool) {
	r := reader{b: p[min(4, len(p)):]}
	xid, opcode = r.int(), r.int()
	switch opcode {
	case opcodeExists, opcodeGetData, opcodeGetChildren, opcodeGetChildren2:
		raw := r.raw()
		if watch = len(r.b) > 0 && r.b[0] != 0 && r.err == nil; watch {
			path = string(raw)
		}
	}
	return xid, opcode, path, watch
}

// createPath is the path of a create request packet, unconverted: a lookup with
// it makes no string.
func createPath(p []byte) []byte {
	r := reader{b: p[min(12, len(p)):]}
	n := r.int()
	if r.err != nil || n < 0 || int(n) > len(r.b) {
		return nil
	}
	return r.b[:n]
}

func isCreate(opcode int32) bool {
	switch opcode {
	case opcodeCreate, opcodeCreate2, opcodeCreateContainer, opcodeCreateTTL:
		return true
	}
	return false
}

// setWatchesPaths reads the paths of a SetWatches request (opcode 101) go-zookeeper
// writes: relative zxid, then its data, exist and child watches.
func setWatchesPaths(p []byte) []string {
	r := reader{b: p[min(12, len(p)):]}
	r.long()
	var paths []string
	for range 3 {
		n := r.int()
		for i := int32(0); i < n && r.err == nil; i++ {
			paths = append(paths, r.str())
		}
	}
	return paths
}
