package zktest

import (
	"fmt"
	"time"
)

// Option tunes the servers that NewServer, StartServer and NewEnsemble start.
type Option func(*config)

type config struct {
	tickTime          time.Duration
	minSession        time.Duration
	maxSession        time.Duration
	containerInterval time.Duration
	extra             []string
	heapMB            int
	clientPort        int
	clientHosts       []string // WithClientAddresses
	dynamic           bool     // WithDynamicConfig
	tls               bool
	clientAuth        bool
	zookeeper         string       // WithZooKeeper's
	secured           secured      // WithRequireAuth, WithSASLDigest, WithKerberos
	install           installation // what zookeeper chose, set by prepare
}

func defaultConfig() config {
	return config{
		tickTime:          200 * time.Millisecond,
		containerInterval: time.Minute,
		heapMB:            256,
	}
}

// WithTickTime sets ZooKeeper's tickTime. Default 200 ms: session timeouts from 2 to 20
// ticks are allowed, so tests can expire sessions in well under a second.
func WithTickTime(d time.Duration) Option { return func(c *config) { c.tickTime = d } }

// WithSessionTimeouts sets the server's minSessionTimeout and maxSessionTimeout, the
// range a client's requested timeout is clamped to. Default 2 and 20 ticks.
func WithSessionTimeouts(min, max time.Duration) Option {
	return func(c *config) { c.minSession, c.maxSession = min, max }
}

// WithContainerCheckInterval sets how often the server deletes empty container nodes
// (znode.container.checkIntervalMs). Default one minute, ZooKeeper's own; tests of
// container cleanup set a few hundred milliseconds.
func WithContainerCheckInterval(d time.Duration) Option {
	return func(c *config) { c.containerInterval = d }
}

// WithConfig appends lines to zoo.cfg, after the ones zktest writes. Default none.
func WithConfig(lines ...string) Option {
	return func(c *config) { c.extra = append(c.extra, lines...) }
}

// WithClientPort serves a standalone server on this loopback port instead of a free
// one (for `zkr dev --port`); a port already taken is an error, not retried. Default:
// a free port.
func WithClientPort(port int) Option { return func(c *config) { c.clientPort = port } }

// WithTLS also serves clients over TLS, on a second port of each server (SecureAddr),
// with a certificate for 127.0.0.1, ::1 and localhost signed by a certificate authority
// made for this server alone (ClientTLSConfig trusts it). The plain port keeps serving.
// TLS needs ZooKeeper's Netty connection factory, which the server then uses on both
// ports. Default: no TLS.
func WithTLS() Option { return func(c *config) { c.tls = true } }

// WithClientAuth is WithTLS with mutual TLS: the secure port refuses a client that
// presents no certificate signed by the servers' certificate authority
// (ssl.clientAuth=need). ClientCertPEM is such a certificate; ClientTLSConfig still
// presents none, so that a test can try both. The plain port keeps serving, unchecked.
// Default: no client certificate asked for.
func WithClientAuth() Option { return func(c *config) { c.tls, c.clientAuth = true, true } }

// WithZooKeeper chooses the servers' ZooKeeper: a version among InstalledVersions
// ("3.9" for the newest 3.9.x, or "3.8.0"), or the directory of a ZooKeeper's jars
// (zookeeper-<version>.jar and zookeeper-jute-<version>.jar; Debian's libraries in
// /usr/share/java serve the rest). Whichever runs is checked against what the server
// itself reports (Server.Version), so another version on the class path fails the
// start. Default: $ZKTEST_ZOOKEEPER (a version or a directory), or else the newest
// installed.
func WithZooKeeper(versionOrDir string) Option {
	return func(c *config) { c.zookeeper = versionOrDir }
}

// WithHeapMB sets the JVM's maximum heap in MiB. Default 256.
func WithHeapMB(mb int) Option { return func(c *config) { c.heapMB = mb } }

func (c config) validate() error {
	switch {
	case c.tickTime < time.Millisecond:
		return fmt.Errorf("zktest: tickTime %v is below 1ms", c.tickTime)
	case c.minSession < 0 || c.maxSession < 0 || (c.maxSession > 0 && c.maxSession < c.minSession):
		return fmt.Errorf("zktest: bad session timeout range [%v, %v]", c.minSession, c.maxSession)
	case c.containerInterval < time.Millisecond:
		return fmt.Errorf("zktest: container check interval %v is below 1ms", c.containerInterval)
	case c.heapMB < 32:
		return fmt.Errorf("zktest: JVM heap of %d MiB is too small (32 at least)", c.heapMB)
	case c.clientPort < 0 || c.clientPort > 65535:
		return fmt.Errorf("zktest: client port %d is not a port", c.clientPort)
	}
	return c.secured.validate()
}
