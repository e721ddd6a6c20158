package framework

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/zktest"
)

// saslThroughFaults connects with opts through a proxy to srv, a server that requires
// SASL, and checks that the client logs in again on a new connection (a cut) and
// for a new session (an expiry): each time a write succeeds.
func saslThroughFaults(t *testing.T, srv *zktest.Server, opts ...Option) {
	proxy := zktest.NewProxy(t, srv.Addr())
	c := newClient(t, []string{proxy.Addr()}, append(opts, WithSessionTimeout(2*time.Second))...)
	ctx := testCtx(t)
	_, err := c.Create(ctx, "/sasl", nil)
	require.NoError(t, err)
	states := listen(c)
	reconnected := func() bool {
		s := states.get()
		return len(s) > 0 && s[len(s)-1] == Reconnected
	}

	proxy.Cut()
	proxy.Restore()
	require.Eventually(t, reconnected, wait, 10*time.Millisecond)
	_, err = c.Create(ctx, "/sasl/after-cut", nil)
	require.NoError(t, err)

	require.NoError(t, proxy.ExpireSession(ctx, 2*time.Second))
	require.Eventually(t, func() bool { return reconnected() && c.SessionID() != 0 }, wait, 10*time.Millisecond)
	_, err = c.Create(ctx, "/sasl/after-expiry", nil)
	require.NoError(t, err)
}

// refusedLogin waits for a client of opts to srv and returns the error: a clear
// one, within the wait.
func refusedLogin(t *testing.T, srv string, opts ...Option) error {
	t.Helper()
	c, err := New([]string{srv}, append(opts, WithConnectionTimeout(2*time.Second))...)
	require.NoError(t, err)
	defer c.Close()
	err = c.WaitConnected(testCtx(t))
	var ce *ConnectError
	require.ErrorAs(t, err, &ce)
	return err
}

func TestSASLDigestMD5(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t, zktest.WithSASLDigest("alice", "secret"))
	login := SASLConfig{Mechanism: SASLDigestMD5, User: "alice", Password: "secret"}

	t.Run("through faults", func(t *testing.T) {
		t.Parallel()
		saslThroughFaults(t, srv, WithSASL(login))
	})
	t.Run("without a login", func(t *testing.T) {
		t.Parallel()
		c := newClient(t, []string{srv.Addr()})
		_, err := c.Create(testCtx(t), "/plain", nil)
		require.ErrorIs(t, err, ErrAuthRequired, "the server requires SASL")
	})
	t.Run("wrong password", func(t *testing.T) {
		t.Parallel()
		wrong := login
		wrong.Password = "wrong"
		err := refusedLogin(t, srv.Addr(), WithSASL(wrong))
		require.ErrorIs(t, err, ErrSASLRefused)
		require.ErrorContains(t, err, "DIGEST-MD5")
		require.ErrorContains(t, err, srv.Addr())
		require.NotContains(t, err.Error(), "wrong")
	})
	t.Run("a server without SASL", func(t *testing.T) {
		t.Parallel()
		plain := zktest.NewServer(t)
		err := refusedLogin(t, plain.Addr(), WithSASL(login))
		require.ErrorIs(t, err, ErrSASLNotOffered)
	})
}

func TestSASLKerberos(t *testing.T) {
	t.Parallel()
	kdc := zktest.NewKDC(t)
	srv := zktest.NewServer(t, zktest.WithKerberos(kdc))
	login := SASLConfig{Mechanism: SASLGSSAPI, Principal: zktest.KDCClientPrincipal,
		Keytab: kdc.ClientKeytab(), Krb5Conf: kdc.Krb5Conf(), ServerHost: "localhost"}

	t.Run("through faults", func(t *testing.T) {
		t.Parallel()
		saslThroughFaults(t, srv, WithSASL(login))
	})
	t.Run("unknown principal", func(t *testing.T) {
		t.Parallel()
		nobody := login
		nobody.Principal = "nobody@" + zktest.KDCRealm
		err := refusedLogin(t, srv.Addr(), WithSASL(nobody))
		require.ErrorContains(t, err, "Kerberos login of nobody@"+zktest.KDCRealm)
		require.ErrorContains(t, err, "KDC_ERR_C_PRINCIPAL_UNKNOWN")
	})
	t.Run("a mechanism the server lacks", func(t *testing.T) {
		t.Parallel()
		err := refusedLogin(t, srv.Addr(), WithSASL(SASLConfig{Mechanism: SASLDigestMD5, User: "alice", Password: "secret"}))
		require.ErrorIs(t, err, ErrSASLRefused)
		require.ErrorContains(t, err, "DIGEST-MD5")
	})
	t.Run("an unknown server principal", func(t *testing.T) {
		t.Parallel()
		elsewhere := login
		elsewhere.ServerHost = "elsewhere"
		err := refusedLogin(t, srv.Addr(), WithSASL(elsewhere))
		require.ErrorContains(t, err, "zookeeper/elsewhere")
	})
}

func TestWithSASLChecksItsInput(t *testing.T) {
	dir := t.TempDir()
	for name, cfg := range map[string]SASLConfig{
		"no mechanism":        {User: "alice", Password: "secret"},
		"unknown mechanism":   {Mechanism: "PLAIN", User: "alice", Password: "secret"},
		"digest without user": {Mechanism: SASLDigestMD5, Password: "secret"},
		"digest with keytab":  {Mechanism: SASLDigestMD5, User: "alice", Password: "secret", Keytab: "x"},
		"gssapi without keys": {Mechanism: SASLGSSAPI, Principal: "client", Krb5Conf: dir + "/none"},
		"gssapi with user":    {Mechanism: SASLGSSAPI, User: "alice", Principal: "client", Password: "p"},
		"gssapi bad host":     {Mechanism: SASLGSSAPI, Principal: "client", Password: "p", ServerHost: "a/b"},
		"missing krb5.conf":   {Mechanism: SASLGSSAPI, Principal: "client", Password: "p", Krb5Conf: dir + "/none"},
		"gssapi no principal": {Mechanism: SASLGSSAPI, Password: "p"},
		"keytab and password": {Mechanism: SASLGSSAPI, Principal: "client", Password: "p", Keytab: "k"},
	} {
		_, err := New([]string{"localhost:2181"}, WithSASL(cfg))
		require.ErrorIs(t, err, ErrInvalidOption, name)
	}
	_, err := New([]string{"localhost:2181"}, WithSASL(SASLConfig{Mechanism: SASLDigestMD5, User: "a", Password: "b"}),
		WithSASL(SASLConfig{Mechanism: SASLDigestMD5, User: "a", Password: "b"}))
	require.ErrorIs(t, err, ErrInvalidOption, "twice")
}

// A configuration printed by a log or an error never shows its password.
func TestSASLConfigPrintsNoPassword(t *testing.T) {
	cfg := SASLConfig{Mechanism: SASLDigestMD5, User: "alice", Password: "secret"}
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		out := fmt.Sprintf(format, cfg)
		require.NotContains(t, out, "secret", format)
		require.Contains(t, out, "alice", format)
	}
}
