package zktest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
)

// routes carry an ensemble's server-to-server traffic through proxies, so that a
// test can partition the servers while their clients still reach them all. routes[i][j]
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
type routes [][]*route

// route is one member's way to another: a proxy to its quorum port (followers to the
// leader) and one to its election port.
type route struct{ quorum, election *Proxy }

func newRoutes(ms []*member) (routes, error) {
	rs := make(routes, len(ms))
	for i := range ms {
		rs[i] = make([]*route, len(ms))
	}
	// The election route from i to j announces i at the route back from j to i, so
	// proxies are made first and given their greeting once all exist.
	for i := range ms {
		for j, to := range ms {
			if i == j {
				continue
			}
			q, err := StartProxy(loopback(to.peerPort))
			if err != nil {
				rs.close()
				return nil, err
			}
			rs[i][j] = &route{quorum: q}
			e, err := StartProxy(loopback(to.electPort))
			if err != nil {
				rs.close()
				return nil, err
			}
			rs[i][j].election = e
		}
	}
	for i := range ms {
		for j := range ms {
			if i != j {
				rs[i][j].election.setGreeting(announce(rs[j][i].election.Addr()))
			}
		}
	}
	return rs, nil
}

// peerLines are the server.N lines of member i's zoo.cfg.
func (rs routes) peerLines(i int, ms []*member) []string {
	lines := make([]string, len(ms))
	for j, m := range ms {
		peer, elect := m.peerPort, m.electPort
		if j != i {
			peer, elect = port(rs[i][j].quorum), port(rs[i][j].election)
		}
		lines[j] = "server." + strconv.Itoa(m.myid) + "=127.0.0.1:" + strconv.Itoa(peer) + ":" + strconv.Itoa(elect)
	}
	return lines
}

func port(p *Proxy) int { return p.ln.Addr().(*net.TCPAddr).Port }

// isolate cuts every route to and from member i; heal restores them all.
func (rs routes) isolate(i int) {
	for j := range rs {
		if j != i {
			rs[i][j].each((*Proxy).Cut)
			rs[j][i].each((*Proxy).Cut)
		}
	}
}

func (rs routes) heal() {
	for _, row := range rs {
		for _, r := range row {
			r.each((*Proxy).Restore)
		}
	}
}

func (rs routes) close() {
	for _, row := range rs {
		for _, r := range row {
			r.each(func(p *Proxy) { _ = p.Close() })
		}
	}
}

func (r *route) each(f func(*Proxy)) {
	if r == nil {
		return
	}
	for _, p := range []*Proxy{r.quorum, r.election} {
		if p != nil {
			f(p)
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
