package framework

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/go-zookeeper/zk"
)

// WithEnsembleTracking makes the client follow the ensemble's own configuration:
// it reads /zookeeper/config (ZooKeeper 3.5+) in its session, watches it, and
// replaces its server list with the client addresses the configuration names,
// hosts written as the configuration writes them (a hostname stays a hostname and
// is resolved when dialled). A member added by a reconfiguration is then dialled
// when the client next connects, and a removed one no longer is; the namespace is
// untouched. The current connection is kept when the list changes, even to a
// server no longer listed (the server ends it if it leaves the ensemble): ZooKeeper's
// own client may move a session to rebalance load, but a move costs every recipe
// on the client a Suspended (its locks, with StandardErrorPolicy), so new
// connections spread over the shuffled list instead. A configuration without client
// addresses (a static one: server.N=host:peer:election, no ";client") is ignored,
// as is one where a member has none a client can use (0.0.0.0 for both its host and
// its client address).
//
// Default false, unlike Curator: a configuration names the addresses the servers
// bind, which clients behind a proxy, a port-forward, NAT or a Kubernetes Service
// cannot reach, so following it by default would replace a list that works with
// one that does not (Curator's users report exactly that); and most ensembles are
// configured statically, where it would only cost a watch per client.
func WithEnsembleTracking(on bool) Option {
	return func(o *options) error {
		o.ensembleTracking = on
		return nil
	}
}

// Servers is the server list in use, "host:port" each, in the order they are
// tried: the one given to New, or with WithEnsembleTracking the ensemble's
// configuration's.
func (c *Client) Servers() []string { return c.hosts.list() }

// track follows /zookeeper/config until the client closes. It is one GetW loop on
// the client's own watch, not the cache of recipes/cache, which the framework
// cannot import (recipes build on the framework): one node, re-read with a new
// watch each time it changes, and after a session ends (its watch then fires with
// EventNotWatching). A read that fails waits for the next connection state.
func (c *Client) track() {
	ctx := c.closing
	for {
		_, next := c.ForRecipes().StateChanges()
		data, _, changed, err := c.readConfig(ctx, true)
		switch {
		case err == nil:
			c.follow(data)
			next = nil
		case ctx.Err() != nil || errors.Is(err, ErrClosed):
			return
		default:
			c.log.Debug("zkrecipes: cannot read the ensemble's configuration; waiting for the next connection", "error", err)
		}
		select {
		case <-changed:
		case <-next:
		case <-ctx.Done():
			return
		}
	}
}

// follow replaces the server list with the configuration's client addresses.
func (c *Client) follow(data []byte) {
	cfg, err := parseConfig(data)
	if err != nil {
		c.log.Warn("zkrecipes: ignoring the ensemble's configuration", "error", err)
		return
	}
	addrs := cfg.ClientAddrs()
	switch {
	case len(addrs) == 0:
		c.log.Debug("zkrecipes: the ensemble's configuration names no client addresses (a static configuration); keeping the server list")
		return
	case len(addrs) < len(cfg.Members):
		// Following it would drop members the client may need.
		c.log.Warn("zkrecipes: the ensemble's configuration names no usable client address for some members (0.0.0.0?); keeping the server list",
			"version", cfg.Version)
		return
	}
	if c.hosts.replace(addrs) {
		c.log.Info("zkrecipes: following the ensemble's configuration", "servers", strings.Join(addrs, ","),
			"version", cfg.Version)
	}
}

// replace makes servers the list, shuffled, unless it holds the same servers
// already; it reports whether the list changed.
func (hs *hosts) replace(servers []string) bool {
	list := zk.FormatServers(servers)
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if sameSet(hs.servers, list) {
		return false
	}
	rand.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
	hs.servers, hs.next = list, 0
	return true
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}
