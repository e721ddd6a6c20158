// Package zktest runs a real Apache ZooKeeper for tests: a standalone server or a
// three-server ensemble on loopback, each member a child java process started from
// Debian's ZooKeeper jars, with a fresh data directory and free ports.
//
// It is to ZooKeeper what net/http/httptest is to HTTP: NewServer and NewEnsemble
// start the real thing and register its shutdown with the test's Cleanup, so a test
// needs one line. Faults are real too: Stop and Start restart a member on the same
// port with the same data, and a Proxy between client and server cuts or black-holes
// connections, or holds a client away long enough for the server to expire its
// session (Proxy.ExpireSession). An ensemble's members reach each other through
// proxies of zktest's too, so that Ensemble.Isolate can cut one off from the others,
// the leader or a follower, while its clients still reach it; Heal ends it.
//
// Servers are tuned for tests: a 200 ms tick, so session timeouts from 400 ms to 4 s
// are allowed and expire quickly; no admin server; every four-letter word that the
// tests and benchmarks read (ruok, srvr, stat, mntr, wchs, wchc, wchp, cons, conf,
// dump) is enabled; no connection limit per client address.
//
// WithTLS adds a secure client port to every server (SecureAddr), with a certificate
// for 127.0.0.1 and localhost signed by a throwaway authority that ClientTLSConfig
// trusts; the plain port keeps serving. WithClientAuth also requires clients to
// present a certificate (mutual TLS); ClientCertPEM is one the servers accept. The certificates are made with Go's crypto
// and handed to ZooKeeper as PEM files, so no keystore tool is needed.
//
// Secured servers refuse every request of a session that has not authenticated, with
// ZooKeeper's error -124, as production ensembles behind Kafka or HBase do:
// WithRequireAuth("digest") wants addauth digest credentials first; WithSASLDigest a
// SASL DIGEST-MD5 login of one of its users; WithKerberos a SASL GSSAPI (Kerberos V5)
// login to a KDC of zktest's. StartKDC runs MIT Kerberos's krb5kdc from Debian's
// packages as a child process, with a realm of its own (KDCRealm), the servers'
// principal and a client's, and their keytabs; it starts in about a tenth of a second,
// and a package's tests share one from TestMain. Every option applies to each member of
// an ensemble (the members' own quorum traffic is not authenticated).
//
// Servers run ZooKeeper 3.9.6 when `make deps` has unpacked it from Debian forky into
// this repository's build/deps, else Debian bookworm's installed 3.8.0 (`scripts/deps.sh
// trixie` adds 3.9.3, which loses acknowledged writes, for reproducing that loss).
// WithZooKeeper, or the environment variable ZKTEST_ZOOKEEPER (3.9 for the newest 3.9.x,
// 3.8, a full version such as 3.9.3, or a directory of jars), chooses; Server.Version
// says what the server itself reports, and a start whose server reports another
// version than its jars' fails (docs/servers.md).
//
// When ZooKeeper is not installed, NewServer fails the test with the command that
// installs it (make deps). Nothing is skipped silently.
package zktest
