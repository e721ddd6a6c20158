package zktest

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
)

// WithDynamicConfig starts an ensemble with ZooKeeper's dynamic configuration
// (3.5+): reconfigEnabled=true, each member's client address in its server line
// ("server.N=127.0.0.1:peer:election:participant;host:clientPort"), so that
// /zookeeper/config names where clients reach every member, and skipACL=yes, so
// that any client may reconfigure it. Every member has the same server lines, so
// the ensemble has no routes between its members: Isolate and Heal do nothing.
// Join adds a member that a reconfiguration can then make a voter. Default: a
// static configuration, without client addresses.
func WithDynamicConfig() Option { return func(c *config) { c.dynamic = true } }

// ServerLine is member i's line in the ensemble's configuration, as a reconfig
// adding it names it: "server.N=127.0.0.1:peer:election:participant;host:port".
func (e *Ensemble) ServerLine(i int) string {
	m := e.ms[i]
	return "server." + strconv.Itoa(m.myid) + "=127.0.0.1:" + strconv.Itoa(m.peerPort) + ":" +
		strconv.Itoa(m.electPort) + ":participant;" + m.addr()
}

// ID is member i's server id, the N of its server.N line.
func (e *Ensemble) ID(i int) int { return e.ms[i].myid }

// dynamicLines are the lines every member of a dynamic ensemble writes.
func dynamicLines(e *Ensemble) []string {
	lines := []string{"reconfigEnabled=true", "standaloneEnabled=false", "skipACL=yes"}
	for i := range e.ms {
		lines = append(lines, e.ServerLine(i))
	}
	return lines
}

// Join starts a new member of an ensemble made WithDynamicConfig, on a client
// address of its own (host, "" for 127.0.0.1), that knows the members zktest started
// and itself. It syncs with the leader and serves clients, but does not vote until a
// reconfiguration adds it (ServerLine names it). Join returns its index once it serves.
func (e *Ensemble) Join(ctx context.Context, host string) (int, error) {
	if !e.ms[0].cfg.dynamic {
		return 0, fmt.Errorf("zktest: Join needs an ensemble made WithDynamicConfig")
	}
	if host != "" && net.ParseIP(host) == nil {
		return 0, fmt.Errorf("zktest: client address %q is not an IP address", host)
	}
	cfg := e.ms[0].cfg
	cfg.clientPort, cfg.tls = 0, false
	ports, release, err := allocatePorts(cfg, 1)
	release()
	if err != nil {
		return 0, err
	}
	dir, err := os.MkdirTemp("", "zktest-")
	if err != nil {
		return 0, fmt.Errorf("zktest: %w", err)
	}
	m := newMember(cfg, e.ms[0].java, dir, e.ms[len(e.ms)-1].myid+1, ports[0], nil)
	m.host = host
	e.ms = append(e.ms, m)
	i := len(e.ms) - 1
	if err := m.writeConfig(dynamicLines(e)); err != nil {
		return i, err
	}
	if err := m.launch(); err != nil {
		return i, err
	}
	return i, m.waitServing(ctx)
}
