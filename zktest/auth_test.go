package zktest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
)

// errRequiresAuth is go-zookeeper's error for ZooKeeper's -124, "session requires
// authentication" (it has no name for the code).
const errRequiresAuth = "unknown error: -124"

// requireRefused checks that a session without credentials is refused its first
// request, with -124.
func requireRefused(t *testing.T, addrs []string) {
	t.Helper()
	conn, _ := connect(t, addrs, 4*time.Second)
	_, err := conn.Create("/refused", nil, 0, zk.WorldACL(zk.PermAll))
	require.EqualError(t, err, errRequiresAuth)
}

func TestRequireAuthDigest(t *testing.T) {
	s := NewServer(t, WithRequireAuth("digest"))
	requireRefused(t, []string{s.Addr()})

	// A session that sends digest credentials first is served.
	conn, _ := connect(t, []string{s.Addr()}, 4*time.Second)
	require.NoError(t, conn.AddAuth("digest", []byte("alice:secret")))
	_, err := conn.Create("/served", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
}

// The SASL servers' positive side, a client that logs in and creates a node, is
// framework/internal/sasl's TestExchange*: no Go client of ZooKeeper speaks SASL.
func TestSASLDigestRefusesPlainClients(t *testing.T) {
	s := NewServer(t, WithSASLDigest("alice", "secret"), WithSASLDigest("bob", "other secret"))
	requireRefused(t, []string{s.Addr()})
	jaas, err := os.ReadFile(filepath.Join(s.m.dir, "jaas.conf"))
	require.NoError(t, err)
	require.Contains(t, string(jaas), `user_alice="secret"`)
	require.Contains(t, string(jaas), `user_bob="other secret"`)
}

func TestKerberosRefusesPlainClients(t *testing.T) {
	kdc := NewKDC(t)
	s := NewServer(t, WithKerberos(kdc))
	requireRefused(t, []string{s.Addr()})
}

func TestKerberosEnsembleRefusesPlainClients(t *testing.T) {
	kdc := NewKDC(t)
	e := NewEnsemble(t, 3, WithKerberos(kdc))
	for _, addr := range e.Addrs() {
		requireRefused(t, []string{addr})
	}
}

func TestSecuredOptionsValidate(t *testing.T) {
	for name, opt := range map[string]Option{
		"nil KDC":         WithKerberos(nil),
		"bad scheme":      WithRequireAuth("digest,sasl"),
		"quote in secret": WithSASLDigest("alice", `se"cret`),
		"bad user":        WithSASLDigest("al ice", "secret"),
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := prepare([]Option{opt})
			require.Error(t, err)
		})
	}
	_, _, err := prepare([]Option{WithKerberos(&KDC{}), WithSASLDigest("alice", "secret")})
	require.ErrorContains(t, err, "not both")
}

func TestKDCAddPrincipal(t *testing.T) {
	kdc := NewKDC(t)
	ctx := context.Background()
	keytab, err := kdc.AddPrincipal(ctx, "alice")
	require.NoError(t, err)
	require.FileExists(t, keytab)
	_, err = kdc.AddPrincipal(ctx, "alice")
	require.ErrorContains(t, err, "exists")
	_, err = kdc.AddPrincipal(ctx, KDCClientPrincipal)
	require.ErrorContains(t, err, "exists")
	_, err = kdc.AddPrincipal(ctx, "alice@OTHER.REALM")
	require.ErrorContains(t, err, "bad principal name")
}
