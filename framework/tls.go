package framework

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

// handshake runs TLS over conn to addr, giving up after bound or when ctx ends (the
// handle closed). Without a ServerName, the certificate must be valid for host, the
// server's host as written in the server list (addr is what its name resolved to);
// cfg itself is never changed. On failure conn is closed.
func handshake(ctx context.Context, conn net.Conn, cfg *tls.Config, addr, host string, bound time.Duration) (net.Conn, error) {
	if cfg.ServerName == "" {
		cfg = cfg.Clone()
		cfg.ServerName = host
	}
	tc := tls.Client(conn, cfg)
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	err := tc.HandshakeContext(ctx)
	if err == nil {
		return tc, nil
	}
	_ = conn.Close()
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return nil, fmt.Errorf("TLS handshake with %s: no answer within %v: %w", addr, bound, err)
	case errors.Is(err, io.EOF):
		// A plaintext port reads the ClientHello as a huge request and hangs up.
		return nil, fmt.Errorf("TLS handshake with %s: the server closed the connection (is it a TLS port?): %w", addr, err)
	case refusedBare(cfg, err):
		return nil, fmt.Errorf("TLS handshake with %s: the server wants a client certificate and the tls.Config has none: %w", addr, err)
	}
	return nil, fmt.Errorf("TLS handshake with %s: %w", addr, err)
}

// noAnswer says why a connection ended before the server's connect response came;
// cfg is nil without TLS. A TLS port hangs up on a plaintext client without a word.
// Under TLS 1.3 the client's side of the handshake ends before the server has looked
// at the client's certificate, so a server that requires one (ZooKeeper 3.9, which
// negotiates 1.3 where 3.8 settled for 1.2) refuses a bare client on its first read.
func noAnswer(addr string, cfg *tls.Config, seen int, err error) error {
	switch {
	case cfg == nil && seen == 0 && errors.Is(err, io.EOF):
		return fmt.Errorf("%s closed the connection without answering (as a server does that is not serving yet, or that has less history than the client has seen; if it is a TLS port, use WithTLS): %w", addr, err)
	case cfg != nil && seen == 0 && refusedBare(cfg, err):
		return fmt.Errorf("no connect response from %s: the server wants a client certificate and the tls.Config has none: %w", addr, err)
	}
	return fmt.Errorf("no connect response from %s: %w", addr, err)
}

// refusedBare reports whether err is the server's alert to a client that presented
// no certificate, as a server that requires one (ZooKeeper's ssl.clientAuth=need)
// sends: bad_certificate, or TLS 1.3's certificate_required.
func refusedBare(cfg *tls.Config, err error) bool {
	var alert *net.OpError
	if len(cfg.Certificates) > 0 || cfg.GetClientCertificate != nil || !errors.As(err, &alert) || alert.Op != "remote error" {
		return false
	}
	msg := alert.Err.Error()
	return strings.HasSuffix(msg, "bad certificate") || strings.HasSuffix(msg, "certificate required")
}
