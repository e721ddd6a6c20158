package zktest

import (
	"context"
	"fmt"
	"net"
)

// WithClientAddresses serves member i's clients on hosts[i] (clientPortAddress)
// instead of 127.0.0.1: one IP address per member, any of 127.0.0.0/8 on Linux, so
// that each member has an address of its own, as the machines of a real ensemble do,
// and a test can give a client names that resolve to them. Give as many as the
// ensemble has members. Default 127.0.0.1 for every member.
func WithClientAddresses(hosts ...string) Option {
	return func(c *config) { c.clientHosts = append([]string(nil), hosts...) }
}

func (c config) checkClientHosts(n int) error {
	if c.clientHosts == nil {
		return nil
	}
	if len(c.clientHosts) != n {
		return fmt.Errorf("zktest: %d client addresses for %d servers", len(c.clientHosts), n)
	}
	for _, h := range c.clientHosts {
		if net.ParseIP(h) == nil {
			return fmt.Errorf("zktest: client address %q is not an IP address", h)
		}
	}
	return nil
}

func (c config) clientHost(i int) string {
	if c.clientHosts == nil {
		return "127.0.0.1"
	}
	return c.clientHosts[i]
}

func (m *member) clientHost() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.host == "" {
		return "127.0.0.1"
	}
	return m.host
}

// Move restarts member i with its clients served on host, at the same port, as a
// machine replaced under the same name comes back at a new address: the member is
// killed, then started again with its data and id, and Move returns once it serves,
// which needs a quorum of the ensemble. Its peers still reach it where they did.
func (e *Ensemble) Move(ctx context.Context, i int, host string) error {
	if net.ParseIP(host) == nil {
		return fmt.Errorf("zktest: client address %q is not an IP address", host)
	}
	m := e.ms[i]
	e.Stop(i)
	m.mu.Lock()
	m.host = host
	m.mu.Unlock()
	var peers []string
	if e.routes != nil {
		peers = e.routes.peerLines(i, e.ms)
	}
	if err := m.writeConfig(peers); err != nil {
		return err
	}
	if err := m.launch(); err != nil {
		return err
	}
	if err := e.routes.setStopped(i, false); err != nil {
		return err
	}
	return m.waitServing(ctx)
}
