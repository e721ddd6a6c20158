package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/zktest"
)

// zkr takes a lock over TLS given the authority's PEM file, and without it says
// why it cannot connect: the server's certificate is not trusted.
func TestLockOverTLS(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t, zktest.WithTLS())
	ca := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(ca, srv.CACertPEM(), 0o600))
	env := []string{"ZK_SERVERS=" + srv.SecureAddr()}

	code, stdout, stderr := runZkr(t, env, args("--tls-ca", ca, "lock", "/tls/job", sh(`echo "held $ZKR_LOCK_NODE"`))...)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "held /tls/job/")

	code, _, stderr = runZkr(t, env, "--tls", "--connect-timeout", "2s", "lock", "/tls/job", "--", "true")
	require.Equal(t, exitZooKeeper, code, stderr)
	require.Contains(t, stderr, "certificate signed by unknown authority")
}

// With mutual TLS, zkr takes the lock given --tls-cert and --tls-key, and without
// them says that the server wants a client certificate.
func TestLockOverMutualTLS(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t, zktest.WithClientAuth())
	dir := t.TempDir()
	ca, cert, key := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	certPEM, keyPEM := srv.ClientCertPEM()
	require.NoError(t, os.WriteFile(ca, srv.CACertPEM(), 0o600))
	require.NoError(t, os.WriteFile(cert, certPEM, 0o600))
	require.NoError(t, os.WriteFile(key, keyPEM, 0o600))
	env := []string{"ZK_SERVERS=" + srv.SecureAddr()}

	code, stdout, stderr := runZkr(t, env, args("--tls-ca", ca, "--tls-cert", cert, "--tls-key", key,
		"lock", "/mtls/job", sh(`echo "held $ZKR_LOCK_NODE"`))...)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "held /mtls/job/")

	code, _, stderr = runZkr(t, env, "--tls-ca", ca, "--connect-timeout", "2s", "lock", "/mtls/job", "--", "true")
	require.Equal(t, exitZooKeeper, code, stderr)
	require.Contains(t, stderr, "the server wants a client certificate")
}

func TestTLSFlagErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	require.NoError(t, os.WriteFile(notPEM, []byte("hello"), 0o600))
	for _, tc := range []struct {
		name string
		args []string
		msg  string
	}{
		{"missing CA file", []string{"--tls-ca", filepath.Join(dir, "missing.pem")}, "zkr lock: --tls-ca: open "},
		{"CA file not PEM", []string{"--tls-ca", notPEM}, "zkr lock: --tls-ca: no PEM certificate in "},
		{"cert without key", []string{"--tls-cert", notPEM}, "zkr lock: --tls-cert and --tls-key go together"},
		{"bad key pair", []string{"--tls-cert", notPEM, "--tls-key", notPEM}, "zkr lock: --tls-cert/--tls-key: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, _, stderr := runZkr(t, []string{"ZK_SERVERS=127.0.0.1:1"}, args(tc.args, "lock", "/a", "--", "true")...)
			require.Equal(t, exitUsage, code, stderr)
			require.True(t, strings.HasPrefix(stderr, tc.msg), "%q does not start with %q", stderr, tc.msg)
		})
	}
}
