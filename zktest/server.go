package zktest

import (
	"context"
	"crypto/tls"
	"errors"
	"os"
	"sync"
	"testing"
)

// Server is a standalone ZooKeeper on a loopback port, with its own data directory.
type Server struct {
	m         *member
	closeOnce sync.Once
	keep      bool // Close leaves the directory (a failed test's)
}

// NewServer starts a standalone server for the test and registers its Close with
// tb.Cleanup. It fails the test, with the server's own log, if the server cannot start.
func NewServer(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	s, err := StartServer(context.Background(), opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		s.keep = keepAfterFailure(tb, []*member{s.m})
		_ = s.Close()
	})
	return s
}

// StartServer starts a standalone server outside of a test (the demo and `zkr dev` use
// it). It returns once the server serves clients; the caller must Close it.
func StartServer(ctx context.Context, opts ...Option) (*Server, error) {
	cfg, java, err := prepare(opts)
	if err != nil {
		return nil, err
	}
	ms, _, err := startMembers(ctx, cfg, java, 1)
	if err != nil {
		return nil, err
	}
	return &Server{m: ms[0]}, nil
}

// Addr is the server's client address, "127.0.0.1:port".
func (s *Server) Addr() string { return s.m.addr() }

// SecureAddr is the server's TLS client address, "127.0.0.1:port", with WithTLS; ""
// without.
func (s *Server) SecureAddr() string { return s.m.secureAddr() }

// ClientTLSConfig is a new TLS configuration that trusts the server's certificate
// (valid for 127.0.0.1, ::1 and localhost) and no other, or nil without WithTLS. Each
// call returns a fresh one, so a test may change it.
func (s *Server) ClientTLSConfig() *tls.Config { return s.m.tls.clientConfig() }

// CACertPEM is the PEM certificate of the authority that signed the server's
// certificate, for tools that read a CA file, or nil without WithTLS.
func (s *Server) CACertPEM() []byte { return s.m.tls.caCertPEM() }

// ClientCertPEM is a client certificate and its private key, PEM, signed by the
// server's certificate authority: with WithClientAuth, the secure port accepts a
// client that presents it (tls.X509KeyPair makes a tls.Certificate of the two). Nil
// without WithTLS.
func (s *Server) ClientCertPEM() (cert, key []byte) { return s.m.tls.clientCertPEM() }

// Version is the ZooKeeper version the server reported when it last started ("3.9.6"),
// read from its answer to srvr, not from its configuration; a start whose server
// reports another version than its jars' fails.
func (s *Server) Version() string { return s.m.serverVersion() }

// Stop kills the server process, as a crash would. Its port and data are kept for Start.
func (s *Server) Stop() { s.m.stop() }

// Start restarts a stopped server on the same port with the same data, and returns once
// it serves. Sessions whose timeout has not run out survive the restart, as in production.
func (s *Server) Start() error {
	if err := s.m.launch(); err != nil {
		return err
	}
	return s.m.waitServing(context.Background())
}

// FourLetter sends a four-letter word (mntr, wchs, srvr, ...) to the server.
func (s *Server) FourLetter(ctx context.Context, word string) (string, error) {
	return fourLetter(ctx, s.Addr(), word)
}

// Close stops the server and removes its directory. It is idempotent.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.m.stop()
		if !s.keep {
			err = os.RemoveAll(s.m.dir)
		}
	})
	return err
}

func prepare(opts []Option) (config, string, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		if o == nil {
			return cfg, "", errors.New("zktest: nil Option")
		}
		o(&cfg)
	}
	if err := cfg.validate(); err != nil {
		return cfg, "", err
	}
	java, err := lookJava()
	if err != nil {
		return cfg, "", err
	}
	cfg.install, err = chooseInstallation(cfg.zookeeper)
	return cfg, java, err
}
