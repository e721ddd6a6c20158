package integration

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/cache"
	"github.com/zkrecipes/zkrecipes/recipes/mutex"
	"github.com/zkrecipes/zkrecipes/zktest"
)

var digestLogin = framework.WithSASL(framework.SASLConfig{
	Mechanism: framework.SASLDigestMD5, User: "alice", Password: "secret"})

// On servers that require a SASL login, DIGEST-MD5 and Kerberos, a cache follows
// its tree and a mutex keeps its hold through a cut connection (the login runs again
// on the new connection), and after a session expiry the cache follows again and the
// mutex is taken again (the login runs for the new session).
func TestRecipesOnSASLServers(t *testing.T) {
	kdc := zktest.NewKDC(t)
	for _, kind := range saslKinds(kdc) {
		t.Run(kind.name, func(t *testing.T) {
			srv := zktest.NewServer(t, kind.server)
			writer := newClient(t, []string{srv.Addr()}, kind.login)
			proxy := zktest.NewProxy(t, srv.Addr())
			c := newClient(t, []string{proxy.Addr()}, kind.login,
				framework.WithSessionTimeout(2*time.Second), framework.WithErrorPolicy(framework.SessionErrorPolicy))
			f := follow(t, c, writer)

			proxy.Cut()
			proxy.Restore()
			f.sees(t, "after-cut")
			require.True(t, f.lock.IsAcquired(), "the hold outlives a cut")

			require.NoError(t, proxy.ExpireSession(testCtx(t), c.NegotiatedSessionTimeout()))
			select {
			case <-f.lock.Lost():
			case <-time.After(wait):
				t.Fatal("the hold did not end with its session")
			}
			f.sees(t, "after-expiry")
			require.ErrorIs(t, f.lock.Release(testCtx(t)), mutex.ErrLost)
			require.NoError(t, f.lock.Acquire(testCtx(t)), "taken again on the new session")
			require.NoError(t, f.lock.Release(testCtx(t)))
		})
	}
}

// On an ensemble whose servers require a SASL login (DIGEST-MD5, Kerberos), a
// client whose connection moves to another member logs in there, within its
// session: its hold and its cache carry on. The client reaches members 0 and 1
// through a proxy each; member 1's refuses until the move, member 0's from then on.
func TestRecipesMoveBetweenSASLMembers(t *testing.T) {
	kdc := zktest.NewKDC(t)
	for _, kind := range saslKinds(kdc) {
		t.Run(kind.name, func(t *testing.T) {
			e := zktest.NewEnsemble(t, 3, kind.server)
			writer := newClient(t, []string{e.Addr(2)}, kind.login)
			to0, to1 := zktest.NewProxy(t, e.Addr(0)), zktest.NewProxy(t, e.Addr(1))
			to1.Cut()
			c := newClient(t, []string{to0.Addr(), to1.Addr()}, kind.login,
				framework.WithErrorPolicy(framework.SessionErrorPolicy))
			f := follow(t, c, writer)
			session := c.SessionID()

			to1.Restore()
			to0.Cut()
			require.Eventually(t, func() bool { return c.State() == framework.Reconnected }, wait, 10*time.Millisecond)
			require.Equal(t, session, c.SessionID(), "the same session, on member 1")
			f.sees(t, "after-move")
			require.True(t, f.lock.IsAcquired(), "the hold outlives the move")
			require.NoError(t, f.lock.Release(testCtx(t)))
		})
	}
}

// saslKind is a server that requires one SASL mechanism, and a client's login to it.
type saslKind struct {
	name   string
	server zktest.Option
	login  framework.Option
}

// saslKinds are DIGEST-MD5's and Kerberos's, the latter on kdc.
func saslKinds(kdc *zktest.KDC) []saslKind {
	return []saslKind{
		{"DIGEST-MD5", zktest.WithSASLDigest("alice", "secret"), digestLogin},
		{"Kerberos", zktest.WithKerberos(kdc), kerberosLogin(kdc)},
	}
}

// kerberosLogin logs in as the KDC's client principal, with its keytab, to servers
// whose principals are zookeeper/localhost (zktest's).
func kerberosLogin(kdc *zktest.KDC) framework.Option {
	return framework.WithSASL(framework.SASLConfig{Mechanism: framework.SASLGSSAPI,
		Principal: zktest.KDCClientPrincipal, Keytab: kdc.ClientKeytab(), Krb5Conf: kdc.Krb5Conf(),
		ServerHost: "localhost"})
}

// follower is a client's cache of /f and its hold of /lock, checked against a
// writer's changes.
type follower struct {
	ca     *cache.Cache
	lock   *mutex.Mutex
	writer *framework.Client
	c      *framework.Client

	mu    sync.Mutex
	heard []string // the cache's events and the client's states, for a failure's message
}

func (f *follower) note(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.heard = append(f.heard, time.Now().Format("15:04:05.000")+" "+s)
}

func (f *follower) story() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.heard, "; ")
}

func follow(t *testing.T, c, writer *framework.Client) *follower {
	t.Helper()
	ctx := testCtx(t)
	_, err := writer.Create(ctx, "/f", nil)
	require.NoError(t, err)
	ca, err := cache.New(c, "/f")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ca.Close(testCtx(t)) })
	f := &follower{ca: ca, writer: writer, c: c}
	t.Cleanup(ca.Listen(func(e cache.Event) { f.note(e.Type.String() + " " + e.Path) }))
	t.Cleanup(c.Listen(func(s framework.ConnectionState) { f.note(s.String()) }))
	require.NoError(t, ca.Start(ctx))
	m, err := mutex.New(c, "/lock")
	require.NoError(t, err)
	require.NoError(t, m.Acquire(ctx))
	f.lock = m
	f.sees(t, "first")
	return f
}

// sees has the writer create /f/name, and waits for the cache to have it.
func (f *follower) sees(t *testing.T, name string) {
	t.Helper()
	_, err := f.writer.Create(testCtx(t), "/f/"+name, nil)
	require.NoError(t, err)
	if !assert.Eventually(t, func() bool { _, ok := f.ca.Get("/f/" + name); return ok }, wait, 10*time.Millisecond,
		"the cache follows: /f/%s", name) {
		t.Fatalf("the client is %v on %s; heard: %s", f.c.State(), f.c.Conn().Server(), f.story())
	}
}
