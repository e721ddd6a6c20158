package sasl

import (
	"testing"

	"github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/stretchr/testify/require"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// kerberosClient logs principal in to the package's KDC with keytab.
func kerberosClient(t *testing.T, principal, keytabPath string) (*client.Client, error) {
	t.Helper()
	cfg, err := config.Load(sharedKDC(t).Krb5Conf())
	require.NoError(t, err)
	kt, err := keytab.Load(keytabPath)
	require.NoError(t, err)
	kc := client.NewWithKeytab(principal, zktest.KDCRealm, kt, cfg, client.DisablePAFXFAST(true))
	t.Cleanup(kc.Destroy)
	return kc, kc.Login()
}

func TestGSSAPIAgainstServer(t *testing.T) {
	kdc := sharedKDC(t)
	srv := zktest.NewServer(t, zktest.WithKerberos(kdc))

	t.Run("login", func(t *testing.T) {
		ctx := bounded(t)
		kc, err := kerberosClient(t, zktest.KDCClientPrincipal, kdc.ClientKeytab())
		require.NoError(t, err)
		creds, err := NewGSSAPI(kc, "", "localhost")
		require.NoError(t, err)
		z := dialSession(t, srv.Addr())
		require.NoError(t, Exchange(ctx, creds.Mechanism(), z.send))
		code, err := z.create(ctx, "/kerberos")
		require.NoError(t, err)
		require.Zero(t, code)
	})
	t.Run("unknown principal", func(t *testing.T) {
		// A keytab of the realm's, for a principal the KDC does not have.
		_, err := kerberosClient(t, "nobody", kdc.ClientKeytab())
		require.ErrorContains(t, err, "KDC_ERR_C_PRINCIPAL_UNKNOWN")
	})
	t.Run("wrong password", func(t *testing.T) {
		cfg, err := config.Load(kdc.Krb5Conf())
		require.NoError(t, err)
		kc := client.NewWithPassword(zktest.KDCClientPrincipal, zktest.KDCRealm, "wrong", cfg, client.DisablePAFXFAST(true))
		t.Cleanup(kc.Destroy)
		// The principal needs no pre-authentication: the KDC answers, and the
		// answer does not decrypt with the wrong password.
		require.ErrorContains(t, kc.Login(), "client password/keytab incorrect")
	})
	t.Run("unknown server principal", func(t *testing.T) {
		ctx := bounded(t)
		kc, err := kerberosClient(t, zktest.KDCClientPrincipal, kdc.ClientKeytab())
		require.NoError(t, err)
		creds, err := NewGSSAPI(kc, "", "elsewhere")
		require.NoError(t, err)
		z := dialSession(t, srv.Addr())
		err = Exchange(ctx, creds.Mechanism(), z.send)
		require.ErrorContains(t, err, "zookeeper/elsewhere")
		require.ErrorContains(t, err, "KDC_ERR_S_PRINCIPAL_UNKNOWN")
	})
	t.Run("DIGEST-MD5 on a Kerberos server", func(t *testing.T) {
		ctx := bounded(t)
		creds, err := NewDigestMD5("alice", "secret")
		require.NoError(t, err)
		z := dialSession(t, srv.Addr())
		err = Exchange(ctx, creds.Mechanism(), z.send)
		require.ErrorIs(t, err, ErrRefused)
	})
}
