package zktest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"
)

// routes carry an ensemble's server-to-server traffic through proxies, so that a
// test can partition the servers while their clients still reach them all. way[i][j]
// is the way from member i to member j (nil where i == j).
//
// ZooKeeper reads one server.N line both to bind its own ports and to reach a peer, so
// each member gets a zoo.cfg of its own: its own line names its real ports, the
// others' lines name the proxies of its routes to them. Followers dial the leader's
// quorum port, and every server dials the others' election ports, all through those
// lines. One connection would escape: a server that receives an election connection
// from a server of lower id hangs up and dials back, not by its own configuration but
// at the address the caller announced in its first message, its real port. The
// election route therefore rewrites that announcement into the address of the route
// back, so the return connection goes through a proxy too.
//
// A route is open while both ends are running and neither is isolated. A closed route
// refuses connections, as a port nobody listens on does: a proxy that accepted and
// then hung up would look to ZooKeeper's election like a peer that answers (its
// connect succeeds, and the notification it then writes is taken off its queue and
// lost in the reset, so it waits out a doubling timeout before trying again), and slow
// every election down by seconds. A closed route still holds its port (heldPort), so
// that nothing else can take the port before the route opens again.
type routes struct {
	way [][]*route

	mu       sync.Mutex
	stopped  map[int]bool
	isolated map[int]bool
}

// peerRedial is how long a route keeps trying a member's port that refuses: long
// enough for a new leader to open its quorum port (a follower that dials it first
// would otherwise see its connection dropped, give up and start another election).
// A stopped member's routes refuse at once instead.
const peerRedial = 5 * time.Second

// route is one member's way to another: a proxy to its quorum port (followers to the
// leader) and one to its election port.
type route struct{ quorum, election *Proxy }

func newRoutes(ms []memberPorts) (*routes, error) {
	rs := &routes{way: make([][]*route, len(ms)), stopped: map[int]bool{}, isolated: map[int]bool{}}
	for i := range ms {
		rs.way[i] = make([]*route, len(ms))
	}
	// The election route from i to j announces i at the route back from j to i, so
	// proxies are made first and given their greeting once all exist.
	for i := range ms {
		for j, to := range ms {
			if i == j {
				continue
			}
			q, err := StartProxy(loopback(to.peer))
			if err != nil {
				rs.close()
				return nil, err
			}
			rs.way[i][j] = &route{quorum: q}
			e, err := StartProxy(loopback(to.elect))
			if err != nil {
				rs.close()
				return nil, err
			}
			rs.way[i][j].election = e
		}
	}
	for i, row := range rs.way {
		for j, r := range row {
			if r != nil {
				r.election.asRoute(announce(rs.way[j][i].election.Addr()), peerRedial)
				r.quorum.asRoute(nil, peerRedial)
			}
		}
	}
	return rs, nil
}

// peerLines are the server.N lines of member i's zoo.cfg.
func (rs *routes) peerLines(i int, ms []*member) []string {
	lines := make([]string, len(ms))
	for j, m := range ms {
		peer, elect := m.peerPort, m.electPort
		if j != i {
			peer, elect = port(rs.way[i][j].quorum), port(rs.way[i][j].election)
		}
		lines[j] = "server." + strconv.Itoa(m.myid) + "=127.0.0.1:" + strconv.Itoa(peer) + ":" + strconv.Itoa(elect)
	}
	return lines
}

func port(p *Proxy) int {
	_, s, _ := net.SplitHostPort(p.Addr())
	n, _ := strconv.Atoi(s)
	return n
}

// setStopped and setIsolated change member i's state, heal ends every isolation,
// and each opens or closes the routes accordingly; nil routes (a standalone server)
// have nothing to do.
func (rs *routes) setStopped(i int, stopped bool) error {
	return rs.change(func() { rs.stopped[i] = stopped })
}

func (rs *routes) setIsolated(i int, isolated bool) error {
	return rs.change(func() { rs.isolated[i] = isolated })
}

func (rs *routes) heal() error { return rs.change(func() { clear(rs.isolated) }) }

func (rs *routes) change(f func()) error {
	if rs == nil {
		return nil
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	f()
	return rs.applyLocked()
}

func (rs *routes) applyLocked() error {
	var errs []error
	for i, row := range rs.way {
		for j, r := range row {
			if r == nil {
				continue
			}
			open := !rs.stopped[j] && !rs.isolated[i] && !rs.isolated[j]
			for _, p := range []*Proxy{r.quorum, r.election} {
				if open {
					errs = append(errs, p.admit())
				} else {
					p.refuse()
				}
			}
		}
	}
	return errors.Join(errs...)
}

func (rs *routes) close() {
	if rs == nil {
		return
	}
	for _, row := range rs.way {
		for _, r := range row {
			if r == nil {
				continue
			}
			for _, p := range []*Proxy{r.quorum, r.election} {
				if p != nil {
					_ = p.Close()
				}
			}
		}
	}
}

// ZooKeeper's election protocol versions that announce the caller's address (its
// QuorumCnxManager's PROTOCOL_VERSION_V1 and _V2); a non-negative first word is the
// old protocol's bare server id.
const maxAnnouncement = 4096

var errAnnouncement = errors.New("zktest: unexpected election greeting")

// announce passes on the first message of an election connection, long version,
// long server id, int length, then the caller's own election address(es), with the
// address replaced by addr.
func announce(addr string) func(client, upstream net.Conn) error {
	return func(client, upstream net.Conn) error {
		var head [20]byte
		if _, err := io.ReadFull(client, head[:8]); err != nil {
			return err
		}
		if int64(binary.BigEndian.Uint64(head[:8])) >= 0 {
			_, err := upstream.Write(head[:8])
			return err
		}
		if _, err := io.ReadFull(client, head[8:]); err != nil {
			return err
		}
		n := binary.BigEndian.Uint32(head[16:])
		if n > maxAnnouncement {
			return fmt.Errorf("%w: an address of %d bytes", errAnnouncement, n)
		}
		if _, err := io.CopyN(io.Discard, client, int64(n)); err != nil {
			return err
		}
		binary.BigEndian.PutUint32(head[16:], uint32(len(addr)))
		_, err := upstream.Write(append(head[:], addr...))
		return err
	}
}
