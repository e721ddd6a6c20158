package integration

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/recipes/mutex"
	"github.com/zkrecipes/zkrecipes/zktest"
)

func TestMutexOverTLS(t *testing.T) {
	srv := zktest.NewServer(t, zktest.WithTLS())
	ctx := testCtx(t)
	tlsClient := func(id string) *mutex.Mutex {
		c := newClient(t, []string{srv.SecureAddr()}, framework.WithTLS(srv.ClientTLSConfig()))
		m, err := mutex.New(c, "/tls/mutex", mutex.WithID(id))
		require.NoError(t, err)
		return m
	}
	first, second := tlsClient("first"), tlsClient("second")

	require.NoError(t, first.Acquire(ctx))
	firstToken := first.FencingToken()
	acquired := make(chan error, 1)
	go func() { acquired <- second.Acquire(ctx) }()
	require.Eventually(t, func() bool {
		ps, err := first.Participants(ctx)
		return err == nil && len(ps) == 2
	}, wait, 10*time.Millisecond, "the second waits behind the first")
	require.False(t, second.IsAcquired())

	require.NoError(t, first.Release(ctx))
	require.NoError(t, <-acquired)
	require.Greater(t, second.FencingToken(), firstToken, "a later holder has a higher token")
	require.NoError(t, second.Release(ctx))

	plain := newClient(t, []string{srv.Addr()}) // the same server, the same data
	require.Empty(t, zkrtest.Children(t, plain, "/tls/mutex"), "no node left")
}

// With mutual TLS, a client without a certificate is refused and says why; one with
// the authority's client certificate works.
func TestMutualTLS(t *testing.T) {
	srv := zktest.NewServer(t, zktest.WithClientAuth())
	ctx := testCtx(t)

	bare, err := framework.New([]string{srv.SecureAddr()}, framework.WithTLS(srv.ClientTLSConfig()))
	require.NoError(t, err)
	defer bare.Close()
	wctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	err = bare.WaitConnected(wctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorContains(t, err, "the server wants a client certificate and the tls.Config has none: remote error: tls: bad certificate")

	certPEM, keyPEM := srv.ClientCertPEM()
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	require.NoError(t, err)
	cfg := srv.ClientTLSConfig()
	cfg.Certificates = []tls.Certificate{cert}
	c := newClient(t, []string{srv.SecureAddr()}, framework.WithTLS(cfg))
	m, err := mutex.New(c, "/mtls/mutex")
	require.NoError(t, err)
	require.NoError(t, m.Acquire(ctx))
	require.NoError(t, m.Release(ctx))
}
