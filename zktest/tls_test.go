package zktest

import (
	"context"
	"crypto/tls"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
)

// connectTLS opens a raw go-zookeeper session over TLS to addrs.
func connectTLS(t *testing.T, addrs []string, cfg *tls.Config) *zk.Conn {
	t.Helper()
	dialer := func(network, addr string, timeout time.Duration) (net.Conn, error) {
		d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: timeout}, Config: cfg}
		return d.Dial(network, addr)
	}
	conn, events, err := zk.Connect(addrs, 4*time.Second, zk.WithDialer(dialer),
		zk.WithLogger(quietLogger{}), zk.WithLogInfo(false))
	require.NoError(t, err)
	t.Cleanup(func() {
		conn.Close()
		for range events {
		}
	})
	waitState(t, events, zk.StateHasSession)
	return conn
}

func TestTLSServer(t *testing.T) {
	free, err := freePorts(1)
	require.NoError(t, err)
	s := NewServer(t, WithTLS(), WithClientPort(free[0]))
	require.Equal(t, "127.0.0.1:"+strconv.Itoa(free[0]), s.Addr())
	require.NotEmpty(t, s.SecureAddr())
	require.NotEqual(t, s.Addr(), s.SecureAddr())

	conn := connectTLS(t, []string{s.SecureAddr()}, s.ClientTLSConfig())
	_, err = conn.Create("/over-tls", []byte("v"), 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)

	// The plain port serves too, four-letter words included.
	out, err := s.FourLetter(context.Background(), "ruok")
	require.NoError(t, err)
	require.Equal(t, "imok", out)
	plain, _ := connect(t, []string{s.Addr()}, 4*time.Second)
	data, _, err := plain.Get("/over-tls")
	require.NoError(t, err)
	require.Equal(t, "v", string(data))

	// A restart serves TLS again with the same certificate.
	s.Stop()
	require.NoError(t, s.Start())
	tc, err := tls.Dial("tcp", s.SecureAddr(), s.ClientTLSConfig())
	require.NoError(t, err)
	require.NoError(t, tc.Close())

	// The certificate is valid for localhost as well, and trusted by nothing else.
	_, port, _ := net.SplitHostPort(s.SecureAddr())
	tc, err = tls.Dial("tcp", net.JoinHostPort("localhost", port), s.ClientTLSConfig())
	require.NoError(t, err)
	require.NoError(t, tc.Close())
	_, err = tls.Dial("tcp", s.SecureAddr(), NewServer(t, WithTLS()).ClientTLSConfig())
	require.ErrorContains(t, err, "certificate signed by unknown authority", "each server has its own authority")
}

func TestNoTLSWithoutTheOption(t *testing.T) {
	s := NewServer(t)
	require.Empty(t, s.SecureAddr())
	require.Nil(t, s.ClientTLSConfig())
}

func TestTLSEnsemble(t *testing.T) {
	e := NewEnsemble(t, 3, WithTLS())
	addrs := e.SecureAddrs()
	require.Len(t, addrs, 3)
	conn := connectTLS(t, addrs, e.ClientTLSConfig())
	_, err := conn.Create("/ensemble-tls", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
}

// With WithClientAuth the secure port takes a client with the certificate that
// ClientCertPEM gives, and refuses one without.
func TestClientAuth(t *testing.T) {
	s := NewServer(t, WithClientAuth())
	certPEM, keyPEM := s.ClientCertPEM()
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	require.NoError(t, err)
	withCert := s.ClientTLSConfig()
	withCert.Certificates = []tls.Certificate{cert}
	conn := connectTLS(t, []string{s.SecureAddr()}, withCert)
	_, err = conn.Create("/mutual", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)

	// Without one, TLS 1.3's handshake ends on the client's side before the server
	// has looked; its refusal comes with the first read.
	tc, err := tls.Dial("tcp", s.SecureAddr(), s.ClientTLSConfig())
	if err == nil {
		_ = tc.SetDeadline(time.Now().Add(zkWait))
		_, err = tc.Read(make([]byte, 1))
		_ = tc.Close()
	}
	require.ErrorContains(t, err, "bad certificate")
}
