package wire

import (
	"bufio"
	"context"
	"errors"
	"log/slog"
	"net"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/framework/internal/sasl"
)

// Config is what a Handle's connections need from the client.
type Config struct {
	// Ctx ends when the handle closes: a connection then fails its writes quietly
	// (see Conn.Write) and its holds end.
	Ctx context.Context
	Log *slog.Logger
	// MaxPacket bounds a packet from the server, its length included.
	MaxPacket int
	// Handshake bounds the wait for the connect response, and each write of the
	// framework's own packets.
	Handshake time.Duration
	// Credentials is how many credentials (setAuth requests) the server must accept
	// on each connection before the framework writes anything of its own: those
	// the client was given (go-zookeeper re-sends them on every connection once
	// they have been accepted on one).
	Credentials int
	// SASL makes the SASL mechanism of one connection to a server whose host, as
	// written in the server list, is host; nil: no SASL login. The login runs first
	// on every connection that has a session (sasl.go).
	SASL func(host string) (sasl.Mechanism, error)
	// Watches are the client's persistent watches.
	Watches *Watches
	// Creates are the creates the client follows (nil: none).
	Creates *Creates
	// Failed hears why a connection ended before its connect response, with how
	// many bytes the server had sent; Answered, that a server answered.
	Failed   func(addr string, seen int, err error)
	Answered func()
	// Zxid hears the zxid in the header of every packet after the connect
	// response, on the reader's goroutine, before go-zookeeper sees the packet.
	Zxid func(zxid int64)
}

// Handle is what the connections of one go-zookeeper handle share: it outlives
// each connection, and a session too (go-zookeeper starts a new one on the same
// handle after an expiry).
type Handle struct {
	cfg Config

	lastRead   atomic.Int64   // unix nanoseconds of the last byte from a server
	negotiated atomic.Int64   // the session timeout the server granted, in ns
	oneShots   oneShots       // go-zookeeper's watches
	lasting    lastingWatches // the framework's that last the session
	// holdsGivenUp counts the reply holds (race builds) that ended at their limit,
	// not at go-zookeeper's SetWatches: none, when oneShots is exact.
	holdsGivenUp atomic.Int32
	// xids tells this connection's SetWatches from an earlier one's (replyhold.go).
	xids     xidsAtConnect
	tooLarge atomic.Pointer[error] // why the last reply too large to read was dropped
	refused  atomic.Pointer[error] // what a server refused last, until credentials are accepted
	lastZxid atomic.Pointer[int64] // go-zookeeper's, once known (lastzxid.go)
}

// NewHandle makes the shared state of a go-zookeeper handle's connections.
func NewHandle(cfg Config) *Handle { return &Handle{cfg: cfg} }

// NewConn wraps conn, a connection just made to addr, for go-zookeeper; host is the
// server's host as written in the server list.
func (h *Handle) NewConn(conn net.Conn, addr, host string) *Conn {
	return &Conn{Conn: conn, h: h, addr: addr, host: host, closed: make(chan struct{}),
		in: bufio.NewReaderSize(stamped{conn, h}, readBuffer)}
}

// Follow finds go-zookeeper's last zxid in zc, the handle's go-zookeeper connection
// (lastzxid.go), and its request count in race builds (replyhold.go); call it
// before the framework's first call and zc's first reconnect.
func (h *Handle) Follow(zc *zk.Conn) {
	if p := goZookeeperLastZxid(zc); p != nil {
		h.lastZxid.Store(p)
	} else {
		h.cfg.Log.Error("zkrecipes: this go-zookeeper has no last zxid named lastZxid; every request goes through go-zookeeper")
	}
	if !holdReplies {
		return
	}
	counter := goZookeeperXids(zc)
	if counter == nil {
		h.cfg.Log.Error("zkrecipes: this go-zookeeper has no request counter named xid; replies are held until any SetWatches (go-zookeeper #35)")
	}
	h.xids.counter.Store(counter)
}

// SessionBack is go-zookeeper's news that a session is (again) established, on its
// connecting goroutine (zk.HostProvider.Connected), before it sets its watches again.
func (h *Handle) SessionBack() { h.xids.connected() }

// LastRead is when a server last sent anything, zero before any.
func (h *Handle) LastRead() time.Time {
	if n := h.lastRead.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// SessionTimeout is the session timeout the server last granted, 0 before any.
func (h *Handle) SessionTimeout() time.Duration { return time.Duration(h.negotiated.Load()) }

// Refused is what a server last refused of the client's credentials, or that it
// requires some (a session that must authenticate), until a connection's
// credentials are accepted; nil if nothing.
func (h *Handle) Refused() error {
	if e := h.refused.Load(); e != nil {
		return *e
	}
	return nil
}

func (h *Handle) refuse(err error) {
	if h.refused.Swap(&err) == nil {
		h.cfg.Log.Error("zkrecipes: the server refused the client's credentials, or has none", "error", err)
	}
}

// HoldsGivenUp counts the reply holds that ended at their limit, not at
// go-zookeeper's SetWatches (replyhold.go): none, when the one-shot watches are
// followed exactly.
func (h *Handle) HoldsGivenUp() int { return int(h.holdsGivenUp.Load()) }

// ReplyError is err, an error go-zookeeper returned for a request of the handle's,
// with the reason in place of go-zookeeper's own error where the Conn failed the
// request because its reply was too large to read (ErrPacketTooLarge).
func (h *Handle) ReplyError(err error) error {
	if errors.Is(err, zk.ErrAPIError) {
		if e := h.tooLarge.Load(); e != nil {
			return *e
		}
	}
	return err
}

// HoldsReplies says whether this build holds replies for go-zookeeper #35: race
// builds only (replyhold.go).
const HoldsReplies = holdReplies
