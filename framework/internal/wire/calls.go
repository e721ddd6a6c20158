package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
)

// The node operations the framework writes and reads itself, with no watch: a
// listing, exists, a read, a create, a set, a delete. Each is written on the
// caller's goroutine and its reply decoded on the reader's, field by field, where a
// call of go-zookeeper's blocks its caller without a context (so a caller that may
// give up waits for it on a goroutine of its own), hands the request to go-zookeeper's
// writing goroutine, and decodes the reply by reflection. A lock's acquisition makes
// four of these: they were half of its client's cost.
//
// They go through the gate (writes.go) as every request of the framework's does,
// and a create's is followed as go-zookeeper's are (Creates), once written. Requests
// that set a one-shot watch stay go-zookeeper's: it sets them again on every
// connection (SetWatches), and the record of one-shot watches (oneShots) is of its
// requests.

// Opcodes of the framework's own node operations.
const (
	opcodeDelete  = 2
	opcodeSetData = 5
)

// Children lists path's children (getChildren2: names and the parent's stat).
func (t *Conn) Children(path string) <-chan Reply {
	return t.request(newRequest(opcodeGetChildren2, len(path)+5).str(path).bool(false))
}

// Exists reads path's stat.
func (t *Conn) Exists(path string) <-chan Reply {
	return t.request(newRequest(opcodeExists, len(path)+5).str(path).bool(false))
}

// Get reads path's data and stat.
func (t *Conn) Get(path string) <-chan Reply {
	return t.request(newRequest(opcodeGetData, len(path)+5).str(path).bool(false))
}

// Delete deletes path if its version is version (-1: any).
func (t *Conn) Delete(path string, version int32) <-chan Reply {
	return t.request(newRequest(opcodeDelete, len(path)+8).str(path).int(version))
}

// Set writes path's data if its version is version (-1: any).
func (t *Conn) Set(path string, data []byte, version int32) <-chan Reply {
	return t.request(newRequest(opcodeSetData, len(path)+len(data)+12).str(path).bytes(data).int(version))
}

// Create makes path with data, acl and flags (ZooKeeper's create mode: ephemeral 1,
// sequential 2); its reply holds the path made.
func (t *Conn) Create(path string, data []byte, acl []zk.ACL, flags int32) <-chan Reply {
	return t.request(createRequest(path, data, acl, flags))
}

func createRequest(path string, data []byte, acl []zk.ACL, flags int32) jute {
	size := len(path) + len(data) + 16
	for _, a := range acl {
		size += 12 + len(a.Scheme) + len(a.ID)
	}
	p := newRequest(opcodeCreate, size).str(path).bytes(data).int(int32(len(acl)))
	for _, a := range acl {
		p = p.int(a.Perms).str(a.Scheme).str(a.ID)
	}
	return p.int(flags)
}

// newRequest begins a request packet with room for size bytes of body: its length and
// xid are written when it is sent (call).
func newRequest(opcode int32, size int) jute {
	return make(jute, 8, 12+size).int(opcode)
}

func (j jute) bool(v bool) jute {
	if v {
		return append(j, 1)
	}
	return append(j, 0)
}

func (j jute) bytes(b []byte) jute {
	if b == nil {
		return j.int(-1) // jute's null buffer, as go-zookeeper writes nil data
	}
	j = j.int(int32(len(b)))
	return append(j, b...)
}

// ErrReply is what a decoder says of a reply whose body is not the shape its
// request's reply has: the server broke the protocol, and the request fails.
var ErrReply = fmt.Errorf("%w: a reply that does not decode", ErrProtocol)

// Err is the reply's error code as go-zookeeper's error of that code: its values
// where it has one (zk.ErrNoNode...), else its "unknown error: N", which the
// framework reads as go-zookeeper's. nil for success.
func (r Reply) Err() error {
	switch r.Code {
	case 0:
		return nil
	case codeTooLarge:
		if r.tooLarge != nil {
			return r.tooLarge
		}
		return ErrPacketTooLarge
	}
	if err, ok := codeErrors[r.Code]; ok {
		return err
	}
	return fmt.Errorf("unknown error: %d", r.Code)
}

// codeErrors are go-zookeeper's errors by ZooKeeper's code, as it maps them.
var codeErrors = map[int32]error{
	-8:   zk.ErrBadArguments,
	-100: zk.ErrAPIError,
	-101: zk.ErrNoNode,
	-102: zk.ErrNoAuth,
	-103: zk.ErrBadVersion,
	-108: zk.ErrNoChildrenForEphemerals,
	-110: zk.ErrNodeExists,
	-111: zk.ErrNotEmpty,
	-112: zk.ErrSessionExpired,
	-114: zk.ErrInvalidACL,
	-115: zk.ErrAuthFailed,
	-116: zk.ErrClosing,
	-117: zk.ErrNothing,
	-118: zk.ErrSessionMoved,
	-123: zk.ErrReconfigDisabled,
}

var errEmptyName = errors.New("a name or path that is empty")

// ChildrenReply decodes a listing's reply: the children's names and the parent's stat.
func (r Reply) ChildrenReply() ([]string, *zk.Stat, error) {
	if err := r.Err(); err != nil {
		return nil, nil, err
	}
	d := reader{b: r.Body}
	n := d.int()
	if n < 0 || int(n) > len(d.b)/4 { // each name takes its length's four bytes at least
		return nil, nil, fmt.Errorf("%w: a listing of %d names in %d bytes", ErrReply, n, len(r.Body))
	}
	names := make([]string, n)
	for i := range names {
		if names[i] = d.str(); names[i] == "" && d.err == nil {
			d.err = errEmptyName // a null or empty name is no child's
		}
	}
	stat := d.stat()
	if d.err != nil {
		return nil, nil, fmt.Errorf("%w: a listing: %w", ErrReply, d.err)
	}
	return names, stat, nil
}

// StatReply decodes the reply of exists or set: a node's stat.
func (r Reply) StatReply() (*zk.Stat, error) {
	if err := r.Err(); err != nil {
		return nil, err
	}
	d := reader{b: r.Body}
	stat := d.stat()
	if d.err != nil {
		return nil, fmt.Errorf("%w: a stat: %w", ErrReply, d.err)
	}
	return stat, nil
}

// DataReply decodes a read's reply: the node's data (nil for none) and stat.
func (r Reply) DataReply() ([]byte, *zk.Stat, error) {
	if err := r.Err(); err != nil {
		return nil, nil, err
	}
	d := reader{b: r.Body}
	data := d.raw()
	stat := d.stat()
	if d.err != nil {
		return nil, nil, fmt.Errorf("%w: a read: %w", ErrReply, d.err)
	}
	// A copy: the body's slice would keep the stat's bytes alive with the data, 80
	// bytes a node in a cache that holds every node's data (BENCHMARKS-scale.md, 2026-12-06).
	return bytes.Clone(data), stat, nil
}

// PathReply decodes a create's reply: the path made.
func (r Reply) PathReply() (string, error) {
	if err := r.Err(); err != nil {
		return "", err
	}
	d := reader{b: r.Body}
	p := d.str()
	if p == "" && d.err == nil {
		d.err = errEmptyName // a create's path is never empty
	}
	if d.err != nil {
		return "", fmt.Errorf("%w: a create: %w", ErrReply, d.err)
	}
	return p, nil
}

// statSize is a stat's size on the wire: four longs, three ints, a long, two ints
// and a long.
const statSize = 68

func (r *reader) stat() *zk.Stat {
	if len(r.b) < statSize {
		r.err = errShortPacket
		return nil
	}
	b := r.b
	s := &zk.Stat{
		Czxid:          int64(binary.BigEndian.Uint64(b[0:])),
		Mzxid:          int64(binary.BigEndian.Uint64(b[8:])),
		Ctime:          int64(binary.BigEndian.Uint64(b[16:])),
		Mtime:          int64(binary.BigEndian.Uint64(b[24:])),
		Version:        int32(binary.BigEndian.Uint32(b[32:])),
		Cversion:       int32(binary.BigEndian.Uint32(b[36:])),
		Aversion:       int32(binary.BigEndian.Uint32(b[40:])),
		EphemeralOwner: int64(binary.BigEndian.Uint64(b[44:])),
		DataLength:     int32(binary.BigEndian.Uint32(b[52:])),
		NumChildren:    int32(binary.BigEndian.Uint32(b[56:])),
		Pzxid:          int64(binary.BigEndian.Uint64(b[60:])),
	}
	r.b = r.b[statSize:]
	return s
}
