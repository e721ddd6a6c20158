package zktest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// ErrEnsembleClosed is CloseKeeping's error for an ensemble already closed.
var ErrEnsembleClosed = errors.New("zktest: ensemble already closed")

// Ensemble is a quorum of ZooKeeper servers on loopback, each with its own ports and
// data directory.
type Ensemble struct {
	ms        []*member
	routes    *routes // nil for one member
	closeOnce sync.Once
	keep      bool // Close leaves the members' directories (a failed test's)
}

// NewEnsemble starts an ensemble of n servers (1 to 5; 3 is the usual) and registers its
// Close with tb.Cleanup. It returns once every member serves.
func NewEnsemble(tb testing.TB, n int, opts ...Option) *Ensemble {
	tb.Helper()
	e, err := StartEnsemble(context.Background(), n, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		e.keep = keepAfterFailure(tb, e.ms)
		_ = e.Close()
	})
	return e
}

// StartEnsemble is NewEnsemble outside of a test; the caller must Close it.
func StartEnsemble(ctx context.Context, n int, opts ...Option) (*Ensemble, error) {
	if n < 1 || n > 5 {
		return nil, fmt.Errorf("zktest: an ensemble has 1 to 5 servers, not %d", n)
	}
	cfg, java, err := prepare(opts)
	if err != nil {
		return nil, err
	}
	if cfg.clientPort != 0 && n > 1 {
		return nil, fmt.Errorf("zktest: WithClientPort is for a standalone server, not an ensemble of %d", n)
	}
	ms, rs, err := startMembers(ctx, cfg, java, n)
	if err != nil {
		return nil, err
	}
	return &Ensemble{ms: ms, routes: rs}, nil
}

// Version is the ZooKeeper version the members reported when they started ("3.9.6"),
// read from their answers to srvr; every member's is checked against its jars.
func (e *Ensemble) Version() string { return e.ms[0].serverVersion() }

// Addrs are the client addresses of every member, running or not, in member order.
func (e *Ensemble) Addrs() []string {
	addrs := make([]string, len(e.ms))
	for i, m := range e.ms {
		addrs[i] = m.addr()
	}
	return addrs
}

// Addr is the client address of member i.
func (e *Ensemble) Addr(i int) string { return e.ms[i].addr() }

// SecureAddrs are the TLS client addresses of every member, in member order, with
// WithTLS; nil without.
func (e *Ensemble) SecureAddrs() []string {
	if e.ms[0].tls == nil {
		return nil
	}
	addrs := make([]string, len(e.ms))
	for i, m := range e.ms {
		addrs[i] = m.secureAddr()
	}
	return addrs
}

// ClientTLSConfig is a new TLS configuration that trusts the members' certificates
// (one certificate authority signs them all), or nil without WithTLS.
func (e *Ensemble) ClientTLSConfig() *tls.Config { return e.ms[0].tls.clientConfig() }

// CACertPEM is the PEM certificate of the authority that signed the members'
// certificates, for tools that read a CA file, or nil without WithTLS.
func (e *Ensemble) CACertPEM() []byte { return e.ms[0].tls.caCertPEM() }

// ClientCertPEM is a client certificate and its private key, PEM, signed by the
// members' certificate authority, for WithClientAuth; nil without WithTLS.
func (e *Ensemble) ClientCertPEM() (cert, key []byte) { return e.ms[0].tls.clientCertPEM() }

// Stop kills member i, as a crash would.
func (e *Ensemble) Stop(i int) {
	e.ms[i].stop()
	_ = e.routes.setStopped(i, true) // closing routes cannot fail
}

// Start restarts member i on its ports with its data and returns once it serves again,
// which needs a quorum of the ensemble to be running.
func (e *Ensemble) Start(i int) error {
	if err := e.ms[i].launch(); err != nil {
		return err
	}
	if err := e.routes.setStopped(i, false); err != nil {
		return err
	}
	return e.ms[i].waitServing(context.Background())
}

// Leader is the index of the member that says it leads (srvr's Mode), or -1 while
// none does, as during an election.
func (e *Ensemble) Leader() int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for i, m := range e.ms {
		if m.pid() == 0 {
			continue
		}
		if mode, _ := m.mode(ctx); mode == "leader" || mode == "standalone" {
			return i
		}
	}
	return -1
}

// Isolate cuts member i off from the other members, as a network partition would,
// until Heal: the connections that carry their quorum and election traffic close,
// and new ones are refused. Clients still reach every member. A member cut off from
// a majority stops serving (it closes its clients' connections and refuses new
// sessions until it rejoins a quorum); the majority elects a leader among itself if
// it has to, and serves on. Isolating a second member leaves no majority.
func (e *Ensemble) Isolate(i int) { _ = e.routes.setIsolated(i, true) } // closing routes cannot fail

// Heal ends every Isolate: the members reach each other again, and an isolated one
// rejoins the quorum (as a follower, or by an election). A closed route keeps its
// port, so nothing else can have taken it; an error says that a route could not
// listen on it again all the same (out of file descriptors, say).
func (e *Ensemble) Heal() error { return e.routes.heal() }

// Mode is what member i says it is doing (srvr's Mode): "leader", "follower" or
// "standalone" while it serves, "" while it does not; an error when it cannot be
// reached.
func (e *Ensemble) Mode(ctx context.Context, i int) (string, error) { return e.ms[i].mode(ctx) }

// FourLetter sends a four-letter word to member i.
func (e *Ensemble) FourLetter(ctx context.Context, i int, word string) (string, error) {
	return fourLetter(ctx, e.ms[i].addr(), word)
}

// Close stops every member and removes their directories. It is idempotent.
func (e *Ensemble) Close() error {
	var err error
	e.closeOnce.Do(func() {
		err = closeMembers(e.ms, e.keep)
		e.routes.close()
	})
	return err
}

// CloseKeeping stops every member, as Close does, and moves each one's directory
// (data/ with its snapshots and transaction logs, zoo.cfg, server.log) to
// dir/server<myid> instead of removing it: the servers' own record of a run, for
// ZooKeeper's tools to read. dir is made if missing; a server<myid> already there is
// replaced. After Close it has nothing left to keep and says so.
func (e *Ensemble) CloseKeeping(dir string) error {
	err := ErrEnsembleClosed
	e.closeOnce.Do(func() {
		err = nil
		for _, m := range e.ms {
			m.stop()
		}
		e.routes.close()
		for i, m := range e.ms {
			if err = keepDir(m.dir, filepath.Join(dir, fmt.Sprintf("server%d", i+1))); err != nil {
				break
			}
		}
	})
	return err
}

// keepDir moves a stopped member's directory to dst, copying it where a rename
// cannot (another file system).
func keepDir(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("zktest: keep %s: %w", src, err)
	}
	if err := os.RemoveAll(dst); err != nil {
		return fmt.Errorf("zktest: keep %s: %w", src, err)
	}
	if os.Rename(src, dst) == nil {
		return nil
	}
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		return fmt.Errorf("zktest: keep %s: %w", src, err)
	}
	return os.RemoveAll(src)
}

// startMembers starts n servers (an ensemble when n > 1, its members linked by
// routes) and waits until all serve. A lost race for a port is retried with fresh
// ports.
func startMembers(ctx context.Context, cfg config, java string, n int) ([]*member, *routes, error) {
	var certs *serverTLS
	if cfg.tls {
		var err error
		if certs, err = newServerTLS(cfg.clientAuth); err != nil {
			return nil, nil, err
		}
	}
	const attempts = 3
	for attempt := 1; ; attempt++ {
		ms, rs, err := tryStartMembers(ctx, cfg, java, n, certs)
		if err == nil {
			return ms, rs, nil
		}
		bindFailed := false
		for _, m := range ms {
			bindFailed = bindFailed || m.bindFailed()
		}
		_ = closeMembers(ms, false)
		rs.close()
		// A fixed client port is checked before each try, so with TLS a bind that
		// failed may be the free secure port's lost race, worth another try.
		if bindFailed && cfg.clientPort != 0 && !cfg.tls {
			return nil, nil, fmt.Errorf("zktest: port %d is in use: %w", cfg.clientPort, err)
		}
		if !bindFailed || attempt == attempts || ctx.Err() != nil {
			return nil, nil, err
		}
	}
}

func tryStartMembers(ctx context.Context, cfg config, java string, n int, certs *serverTLS) ([]*member, *routes, error) {
	if err := cfg.checkClientHosts(n); err != nil {
		return nil, nil, err
	}
	if cfg.clientPort != 0 {
		// A server already there would answer our readiness probes for the new one.
		l, err := net.Listen("tcp", loopback(cfg.clientPort))
		if err != nil {
			return nil, nil, fmt.Errorf("zktest: port %d is in use: %w", cfg.clientPort, err)
		}
		l.Close()
	}
	ports, rs, err := ensemblePorts(cfg, n)
	if err != nil {
		return nil, nil, err
	}
	ms := make([]*member, 0, n)
	for i := range n {
		dir, err := os.MkdirTemp("", "zktest-")
		if err != nil {
			return ms, rs, fmt.Errorf("zktest: %w", err)
		}
		myid := 0
		if n > 1 || cfg.dynamic {
			myid = i + 1
		}
		ms = append(ms, newMember(cfg, java, dir, myid, ports[i], certs))
		ms[i].host = cfg.clientHost(i)
	}
	for i, m := range ms {
		var peers []string
		switch {
		case cfg.dynamic:
			peers = dynamicLines(&Ensemble{ms: ms})
		case rs != nil:
			peers = rs.peerLines(i, ms)
		}
		if err := m.writeConfig(peers); err != nil {
			return ms, rs, err
		}
		if err := m.launch(); err != nil {
			return ms, rs, err
		}
	}
	var errs []error
	for _, m := range ms {
		errs = append(errs, m.waitServing(ctx))
	}
	return ms, rs, errors.Join(errs...)
}

// ensemblePorts finds free ports for n members and, for an ensemble, makes the
// routes between them. The members' ports stay reserved until the routes' proxies
// listen: the kernel would otherwise be free to give a proxy the port of a member,
// which binds its quorum port only once it leads (a member whose own quorum port a
// proxy holds fails to lead, again and again, and the ensemble never has a quorum).
func ensemblePorts(cfg config, n int) ([]memberPorts, *routes, error) {
	ports, release, err := allocatePorts(cfg, n)
	defer release()
	if err != nil {
		return nil, nil, err
	}
	var rs *routes
	if n > 1 && !cfg.dynamic {
		if rs, err = newRoutes(ports); err != nil {
			return nil, nil, err
		}
	}
	return ports, rs, nil
}

// allocatePorts finds free ports for n members: a client port (unless fixed), a secure
// one with TLS, and peer and election ports in an ensemble. They stay reserved
// (reservePorts) until release, which the members must have called before they bind.
func allocatePorts(cfg config, n int) (_ []memberPorts, release func(), _ error) {
	perMember := 0
	if cfg.clientPort == 0 {
		perMember++
	}
	if cfg.tls {
		perMember++
	}
	if n > 1 || cfg.dynamic {
		perMember += 2
	}
	free, release, err := reservePorts(n * perMember)
	if err != nil {
		return nil, release, err
	}
	next := func() int { p := free[0]; free = free[1:]; return p }
	ports := make([]memberPorts, n)
	for i := range ports {
		p := &ports[i]
		p.client = cfg.clientPort
		if p.client == 0 {
			p.client = next()
		}
		if cfg.tls {
			p.secure = next()
		}
		if n > 1 || cfg.dynamic {
			p.peer, p.elect = next(), next()
		}
	}
	return ports, release, nil
}

func closeMembers(ms []*member, keep bool) error {
	var errs []error
	for _, m := range ms {
		m.stop()
		if !keep {
			errs = append(errs, os.RemoveAll(m.dir))
		}
	}
	return errors.Join(errs...)
}

// keepAfterFailure says whether a test's servers should leave their directories,
// data and server.log, behind: when the test failed, since the servers' side of what
// went wrong is there.
func keepAfterFailure(tb testing.TB, ms []*member) bool {
	if !tb.Failed() {
		return false
	}
	dirs := make([]string, len(ms))
	for i, m := range ms {
		dirs[i] = m.dir
	}
	tb.Logf("zktest: the test failed; the servers' data and logs (server.log) stay in %s", strings.Join(dirs, " "))
	return true
}
