package framework

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// WithResolver sets the resolver that turns the servers' names into addresses. Names
// are resolved when the client is about to dial them, each time, never once for
// good: a server that comes back under its name at a new address (a restarted
// Kubernetes pod) is found there. Default net.DefaultResolver.
func WithResolver(r *net.Resolver) Option {
	return func(o *options) error {
		if r == nil {
			return invalidOption("nil resolver")
		}
		o.resolver = r
		return nil
	}
}

// hosts is the client's server list, as the user wrote it (names and ports), and
// what it knows of each name. It outlives handles: a new session starts where the
// last one left off, and a name's failure is logged once, not once per handle.
type hosts struct {
	resolver *net.Resolver
	log      *slog.Logger
	bound    time.Duration // one lookup's limit

	mu      sync.Mutex
	servers []string
	next    int
	known   map[string]string // a server's last outcome: its addresses or its error
}

func newHosts(servers []string, r *net.Resolver, log *slog.Logger, bound time.Duration) *hosts {
	// go-zookeeper's own format: a server without a port gets 2181.
	list := zk.FormatServers(servers)
	// Spread clients over the ensemble, as go-zookeeper and ZooKeeper's client do.
	rand.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
	return &hosts{resolver: r, log: log, bound: bound, servers: list, known: map[string]string{}}
}

// take returns the next server to try, and how many there are.
func (hs *hosts) take() (string, int) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.next %= len(hs.servers)
	s := hs.servers[hs.next]
	hs.next++
	return s, len(hs.servers)
}

// list is the server list in use.
func (hs *hosts) list() []string {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return slices.Clone(hs.servers)
}

// resolve looks a server's name up, bounded by hs.bound and ctx. go-zookeeper asks
// its host provider for the next server with no context, so the bound is ours: a
// slow name holds up trying the others for at most that long. The outcome is logged
// when it changes: a name that stops resolving once, however often it is retried,
// and again when it resolves (or moves).
func (hs *hosts) resolve(ctx context.Context, server string) ([]string, error) {
	host, port, err := net.SplitHostPort(server)
	if err != nil {
		return nil, fmt.Errorf("framework: server %q: %w", server, err)
	}
	lookup, cancel := context.WithTimeout(ctx, hs.bound)
	defer cancel()
	ips, err := hs.resolver.LookupHost(lookup, host)
	if ctx.Err() != nil { // the handle closed: nothing to learn about the name
		return nil, fmt.Errorf("framework: server %s: %w", server, ctx.Err())
	}
	if err == nil && len(ips) == 0 {
		err = fmt.Errorf("lookup %s: no addresses", host)
	}
	outcome := ""
	if err != nil {
		err = fmt.Errorf("framework: server %s: %w", server, err)
		outcome = err.Error()
	} else {
		outcome = strings.Join(ips, ",")
	}
	hs.mu.Lock()
	before, seen := hs.known[server]
	hs.known[server] = outcome
	hs.mu.Unlock()
	switch {
	case err != nil && (!seen || outcome != before):
		hs.log.Warn("zkrecipes: a server's name does not resolve; trying the others", "server", server, "error", err)
	case err == nil && seen && outcome != before:
		hs.log.Info("zkrecipes: a server's name resolves to new addresses", "server", server, "addresses", outcome)
	}
	if err != nil {
		return nil, err
	}
	addrs := make([]string, len(ips))
	for i, ip := range ips {
		addrs[i] = net.JoinHostPort(ip, port)
	}
	return addrs, nil
}

// target is what one Next handed go-zookeeper: an address and the name it came
// from, or the name alone with why it did not resolve.
type target struct {
	addr string // what go-zookeeper dials
	host string // the host as the user wrote it, for TLS
	err  error  // the name did not resolve: addr is the name, not to be dialled
}

// hostProvider is the zk.HostProvider of one handle. It resolves each name when it
// comes to it, so every pass over the servers looks their names up again, and yields
// each address of a name with several before moving on. A name that does not
// resolve is handed over anyway, with its error kept for connect to return without
// dialling: go-zookeeper then counts it as a failed attempt and moves on, and after
// a whole pass without a server it pauses as it does for unreachable servers,
// instead of spinning on lookups.
type hostProvider struct {
	hosts *hosts
	ctx   context.Context // the handle's: a lookup ends when the handle closes

	mu      sync.Mutex
	pending []string // addresses of the current name not yet yielded
	host    string   // the current name's host
	tried   int      // names begun since the last connection
	last    target

	// connected is called as go-zookeeper's session is back, on its connecting
	// goroutine (internal/wire/replyhold.go); nil: nothing.
	connected func()
}

// Init is go-zookeeper's; the client's own list (hosts) is the one used, so that it
// can change while the handle lives.
func (p *hostProvider) Init([]string) error { return nil }

func (p *hostProvider) Len() int { return len(p.hosts.list()) }

func (p *hostProvider) Next() (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	retryStart := false
	if len(p.pending) == 0 {
		server, n := p.hosts.take()
		p.tried++
		if p.tried > n {
			retryStart, p.tried = true, 1
		}
		addrs, err := p.hosts.resolve(p.ctx, server)
		host, _, _ := net.SplitHostPort(server)
		if err != nil {
			p.last = target{addr: server, host: host, err: err}
			return server, retryStart
		}
		p.pending, p.host = addrs, host
	}
	p.last = target{addr: p.pending[0], host: p.host}
	p.pending = p.pending[1:]
	return p.last.addr, retryStart
}

// Connected starts the count of a pass again, and drops the addresses of the name
// not yet tried: the next connection, whenever it is needed, looks the name up anew.
func (p *hostProvider) Connected() {
	if p.connected != nil {
		p.connected()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tried, p.pending = 0, nil
}

// target is what Next said about addr, the address go-zookeeper is about to dial;
// with no provider (a handle made by a test), addr as it is.
func (p *hostProvider) target(addr string) target {
	host, _, _ := net.SplitHostPort(addr)
	if p == nil {
		return target{addr: addr, host: host}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last.addr == addr {
		return p.last
	}
	return target{addr: addr, host: host}
}
