package framework

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/zktest"
)

// failWithin is how long a client that cannot connect is given before WaitConnected
// gives up: enough for several attempts, each about a second apart. A client whose
// connection timeout is shorter retries before its first connection
// (WithRetryBeforeFirstConnection), so that its WaitConnected, like the others', ends
// only with ctx.
const failWithin = 3 * time.Second

// waitFailing returns what WaitConnected says when it gives up on c.
func waitFailing(t *testing.T, c *Client) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), failWithin)
	defer cancel()
	err := c.WaitConnected(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	return err
}

func TestTLS(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t, zktest.WithTLS())

	t.Run("round trip", func(t *testing.T) {
		t.Parallel()
		cfg := srv.ClientTLSConfig()
		c := newClient(t, []string{srv.SecureAddr()}, WithTLS(cfg), WithSessionTimeout(2*time.Second))
		require.Empty(t, cfg.ServerName, "the caller's config is left alone")
		// The session timeout is read from the connect response: only right if the
		// tracking reads the decrypted stream.
		require.Equal(t, 2*time.Second, c.NegotiatedSessionTimeout())
		ctx := testCtx(t)
		_, err := c.Create(ctx, "/tls", []byte("secret"))
		require.NoError(t, err)
		data, _, err := c.Get(ctx, "/tls")
		require.NoError(t, err)
		require.Equal(t, "secret", string(data))
	})

	t.Run("server name from the host dialled", func(t *testing.T) {
		t.Parallel()
		_, port, err := net.SplitHostPort(srv.SecureAddr())
		require.NoError(t, err)
		newClient(t, []string{net.JoinHostPort("localhost", port)}, WithTLS(srv.ClientTLSConfig()))

		cfg := srv.ClientTLSConfig()
		cfg.ServerName = "zk.example.com" // given, it wins over the host
		c, err := New([]string{srv.SecureAddr()}, WithTLS(cfg))
		require.NoError(t, err)
		defer c.Close()
		require.ErrorContains(t, waitFailing(t, c), "not zk.example.com")
	})

	t.Run("untrusted certificate", func(t *testing.T) {
		t.Parallel()
		// slog's handler serialises its writes; the log is read once the client closed.
		var logs bytes.Buffer
		c, err := New([]string{srv.SecureAddr()},
			WithTLS(&tls.Config{RootCAs: x509.NewCertPool()}),
			WithLogger(slog.New(slog.NewTextHandler(&logs, nil))),
			WithConnectionTimeout(time.Second), WithRetryPolicy(RetryNTimes(0, 0)), WithRetryBeforeFirstConnection())
		require.NoError(t, err)
		defer c.Close()
		err = waitFailing(t, c)
		var unknown x509.UnknownAuthorityError
		require.ErrorAs(t, err, &unknown, "the certificate's failure is in the chain: %v", err)
		require.ErrorContains(t, err, "TLS handshake with "+srv.SecureAddr())
		require.ErrorContains(t, err, "certificate signed by unknown authority")

		_, err = c.Create(testCtx(t), "/never", nil) // operations say why too
		require.True(t, IsRetryable(err), "a server may get a trusted certificate: %v", err)
		require.ErrorContains(t, err, "certificate signed by unknown authority")

		require.NoError(t, c.Close())
		require.Equal(t, 1, strings.Count(logs.String(), "certificate signed by unknown authority"),
			"the failure is logged, and once, however often it repeats: %s", logs.String())
	})

	t.Run("plaintext to the TLS port", func(t *testing.T) {
		t.Parallel()
		c, err := New([]string{srv.SecureAddr()})
		require.NoError(t, err)
		defer c.Close()
		require.ErrorContains(t, waitFailing(t, c), "if it is a TLS port, use WithTLS")
	})

	t.Run("TLS to the plaintext port", func(t *testing.T) {
		t.Parallel()
		c, err := New([]string{srv.Addr()}, WithTLS(srv.ClientTLSConfig()))
		require.NoError(t, err)
		defer c.Close()
		require.ErrorContains(t, waitFailing(t, c), "is it a TLS port?")
	})

	t.Run("over the dialer's connections", func(t *testing.T) {
		t.Parallel()
		var dialled atomic.Int32
		dialer := func(network, addr string, timeout time.Duration) (net.Conn, error) {
			dialled.Add(1)
			return net.DialTimeout(network, addr, timeout)
		}
		c := newClient(t, []string{srv.SecureAddr()}, WithTLS(srv.ClientTLSConfig()), WithDialer(dialer))
		require.NotZero(t, dialled.Load())
		_, err := c.Create(testCtx(t), "/dialled", nil)
		require.NoError(t, err)
	})
}

func TestTLSHandshakeIsBounded(t *testing.T) {
	t.Parallel()
	// A server that accepts and never answers the ClientHello.
	silent, _ := silentServer(t)
	c, err := New([]string{silent}, WithTLS(&tls.Config{}), WithConnectionTimeout(500*time.Millisecond),
		WithRetryBeforeFirstConnection())
	require.NoError(t, err)
	defer c.Close()
	require.ErrorContains(t, waitFailing(t, c), "no answer within 500ms")
}

func TestCloseInterruptsATLSHandshake(t *testing.T) {
	t.Parallel()
	silent, accepted := silentServer(t)
	c, err := New([]string{silent}, WithTLS(&tls.Config{}),
		WithConnectionTimeout(time.Hour), WithSessionTimeout(time.Hour))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return accepted.Load() > 0 }, wait, 10*time.Millisecond,
		"the client is in its handshake")
	closed := make(chan struct{})
	go func() { c.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(wait):
		t.Fatal("Close waited for a TLS handshake with a silent server")
	}
}
