package nodes

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

func TestEphemeralNodeLifecycle(t *testing.T) {
	srv := zkrtest.Server(t)
	c := newClient(t, []string{srv.Addr()})
	other := newClient(t, []string{srv.Addr()})
	ctx := testCtx(t)

	p := newNode(t, c, "/services/api/replica-1", []byte("10.0.0.1:80"))
	require.Empty(t, p.Path(), "nothing before Start")
	require.NoError(t, p.Start(ctx))
	require.Equal(t, "/services/api/replica-1", p.Path())
	nodeIs(t, other, p.Path(), "10.0.0.1:80", c.SessionID)
	require.NoError(t, p.SetData(ctx, []byte("10.0.0.1:81")))
	data, _, err := other.Get(ctx, p.Path())
	require.NoError(t, err)
	require.Equal(t, "10.0.0.1:81", string(data), "SetData returns once the node holds the data")

	require.NoError(t, other.Delete(ctx, p.Path(), -1), "someone deletes it")
	nodeIs(t, other, "/services/api/replica-1", "10.0.0.1:81", c.SessionID)

	require.NoError(t, p.Close(ctx))
	require.Empty(t, p.Path())
	gone(t, other, "/services/api/replica-1")
	require.NoError(t, p.Close(ctx), "a second Close")
	require.ErrorIs(t, p.SetData(ctx, nil), ErrClosed)
	require.ErrorIs(t, p.Start(ctx), ErrClosed)
}

// The node is back after its session expired, at the same path, with the data
// given while it could not be written.
func TestBackAfterSessionExpiry(t *testing.T) {
	srv := zkrtest.Server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	c := newClient(t, []string{proxy.Addr()}, framework.WithSessionTimeout(2*time.Second))
	other := newClient(t, []string{srv.Addr()})
	ctx := testCtx(t)

	p := newNode(t, c, "/workers/w1", []byte("v1"))
	require.NoError(t, p.Start(ctx))
	before := c.SessionID()
	nodeIs(t, other, "/workers/w1", "v1", func() int64 { return before })

	proxy.Cut()
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	err := p.SetData(short, []byte("v2"))
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded, "no connection: the data waits")
	proxy.Restore()
	require.NoError(t, proxy.ExpireSession(ctx, 2*time.Second))
	require.NoError(t, c.WaitConnected(ctx))
	require.NotEqual(t, before, c.SessionID(), "a new session")

	nodeIs(t, other, "/workers/w1", "v2", c.SessionID)
	require.Equal(t, "/workers/w1", p.Path())
	require.NoError(t, p.SetData(ctx, []byte("v3")))
	nodeIs(t, other, "/workers/w1", "v3", c.SessionID)
}

// A ReadOnly node is made again after its session expired with the same ACL, READ
// only: nobody can set it, in the new session as in the first.
func TestReadOnlyBackAfterSessionExpiry(t *testing.T) {
	srv := zktest.NewServer(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	c := newClient(t, []string{proxy.Addr()}, framework.WithSessionTimeout(2*time.Second))
	other := newClient(t, []string{srv.Addr()})
	ctx := testCtx(t)

	p := newNode(t, c, "/workers/w1", []byte("v1"), ReadOnly())
	require.NoError(t, p.Start(ctx))
	require.ErrorIs(t, p.SetData(ctx, []byte("v2")), ErrReadOnly)
	before := c.SessionID()
	nodeIs(t, other, "/workers/w1", "v1", func() int64 { return before })
	require.NoError(t, proxy.ExpireSession(ctx, 2*time.Second))
	require.NoError(t, c.WaitConnected(ctx))
	nodeIs(t, other, "/workers/w1", "v1", c.SessionID)

	acl, _, err := other.GetACL(ctx, "/workers/w1")
	require.NoError(t, err)
	require.Equal(t, framework.WorldACL(framework.PermRead), acl)
	_, err = other.Set(ctx, "/workers/w1", []byte("v2"), -1)
	require.ErrorIs(t, err, framework.ErrNoAuth)
}

// A server restart keeps the session: the node stays, and data given while the
// server was down reaches it. The session outlives the restart however long a busy
// machine takes over it (the server's default cap would cut 10 s to 4).
func TestServerRestart(t *testing.T) {
	srv := zktest.NewServer(t, zktest.WithSessionTimeouts(400*time.Millisecond, 2*time.Minute))
	c := newClient(t, []string{srv.Addr()}, framework.WithSessionTimeout(time.Minute))
	ctx := testCtx(t)
	p := newNode(t, c, "/restart/node", []byte("before"))
	require.NoError(t, p.Start(ctx))
	session := c.SessionID()

	srv.Stop()
	setData := make(chan error, 1)
	go func() { setData <- p.SetData(ctx, []byte("during")) }()
	require.NoError(t, srv.Start())
	require.NoError(t, <-setData, "SetData returns once the node holds the data")
	other := newClient(t, []string{srv.Addr()})
	nodeIs(t, other, "/restart/node", "during", func() int64 { return session })
	require.Equal(t, session, c.SessionID())
}

// A node at the path that another client made is never taken over, overwritten or
// deleted: Start says whose it is.
func TestAnotherClientsNode(t *testing.T) {
	srv := zkrtest.Server(t)
	c := newClient(t, []string{srv.Addr()})
	other := newClient(t, []string{srv.Addr()})
	ctx := testCtx(t)

	_, err := other.Create(ctx, "/taken/ephemeral", []byte("theirs"), framework.Ephemeral(), framework.CreatingParents())
	require.NoError(t, err)
	p := newNode(t, c, "/taken/ephemeral", []byte("ours"))
	err = p.Start(ctx)
	require.ErrorIs(t, err, ErrNodeExists)
	require.ErrorContains(t, err, fmt.Sprintf("session %#x", other.SessionID()))
	nodeIs(t, c, "/taken/ephemeral", "theirs", other.SessionID)
	require.Empty(t, p.Path())

	_, err = other.Create(ctx, "/taken/persistent", []byte("theirs"))
	require.NoError(t, err)
	q := newNode(t, c, "/taken/persistent", []byte("theirs"), Persistent())
	err = q.Start(ctx)
	require.ErrorIs(t, err, ErrNodeExists, "even with the same data: it was there before we tried")
	require.ErrorContains(t, err, "persistent node")
	require.NoError(t, q.Close(ctx))
	nodeIs(t, c, "/taken/persistent", "theirs", persistentOwner)

	// Once started, a PersistentNode that finds the path taken waits for it to be free.
	r := newNode(t, c, "/taken/later", []byte("ours"))
	require.NoError(t, r.Start(ctx))
	require.Eventually(t, func() bool { // take the path while ours is away
		_ = other.Delete(ctx, "/taken/later", -1)
		_, err := other.Create(ctx, "/taken/later", []byte("theirs"), framework.Ephemeral())
		return err == nil
	}, wait, time.Millisecond)
	setData := make(chan error, 1)
	go func() { setData <- r.SetData(ctx, []byte("ours, new")) }()
	nodeIs(t, c, "/taken/later", "theirs", other.SessionID)
	require.NoError(t, other.Close())
	require.NoError(t, <-setData)
	nodeIs(t, c, "/taken/later", "ours, new", c.SessionID)
}

// A node at the path owned by an earlier session of ours is the leftover of a
// session the client gave up: deleted and made again, never taken for the current
// session's.
func TestNodeOfAnEarlierSession(t *testing.T) {
	srv := zkrtest.Server(t)
	c := newClient(t, []string{srv.Addr()})
	earlier := newClient(t, []string{srv.Addr()}) // stands for our earlier session, still alive
	ctx := testCtx(t)
	_, err := earlier.Create(ctx, "/leftover/node", []byte("old"), framework.Ephemeral(), framework.CreatingParents())
	require.NoError(t, err)

	p := newNode(t, c, "/leftover/node", []byte("new"))
	p.sessions[earlier.SessionID()] = true
	require.NoError(t, p.Start(ctx))
	nodeIs(t, c, "/leftover/node", "new", c.SessionID)
}

// The way a node of an earlier session of ours comes about: the server is down for
// longer than the session timeout, so the client gives its session up (Lost) and
// opens a new one once the server is back; but the server restored the old session
// from its log, and keeps it, with our node, for another session timeout. The keeper
// must not take that node for the new session's, as Curator's PersistentNode does
// (it writes its data into it, and the node vanishes when the old session expires):
// data given now is written to a node of the new session.
func TestNodeOfASessionGivenUp(t *testing.T) {
	srv := zktest.NewServer(t)
	log := &messages{}
	// The server keeps the restored session for a session timeout from its start: long
	// enough for a starved machine's client to reconnect and look within it (4 s was
	// not, once, in CI beside a soak).
	c := newClient(t, []string{srv.Addr()}, framework.WithSessionTimeout(8*time.Second), framework.WithLogger(slog.New(log)))
	ctx := testCtx(t)
	p := newNode(t, c, "/given-up/node", []byte("v1"))
	require.NoError(t, p.Start(ctx))
	old := c.SessionID()
	lost, stop := zkrtest.Hears(c, framework.Lost)
	defer stop()

	srv.Stop()
	select {
	case <-lost:
	case <-time.After(wait):
		t.Fatal("the client did not give its session up")
	}
	require.NoError(t, srv.Start())
	require.NoError(t, c.WaitConnected(ctx))
	require.NoError(t, p.SetData(ctx, []byte("v2")), "returns once the node holds the data")
	data, stat, err := c.Get(ctx, "/given-up/node")
	require.NoError(t, err)
	require.NotEqual(t, old, c.SessionID(), "a new session")
	require.Equal(t, "v2", string(data))
	require.Equal(t, c.SessionID(), stat.EphemeralOwner, "written to a node of the new session, not of the given-up one")
	require.True(t, log.has("zkrecipes: deleting a persistent node left by an earlier session"),
		"the server still had the old session and its node when the keeper looked")
}

// messages keeps the messages logged.
type messages struct {
	mu   sync.Mutex
	msgs []string
}

func (m *messages) Enabled(context.Context, slog.Level) bool { return true }
func (m *messages) Handle(_ context.Context, r slog.Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.msgs = append(m.msgs, r.Message)
	return nil
}
func (m *messages) WithAttrs([]slog.Attr) slog.Handler { return m }
func (m *messages) WithGroup(string) slog.Handler      { return m }
func (m *messages) has(msg string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Contains(m.msgs, msg)
}

// A node of the current session at the path is ours (the node of a create whose
// reply was lost): taken over, and given our data.
func TestNodeOfTheCurrentSession(t *testing.T) {
	srv := zkrtest.Server(t)
	c := newClient(t, []string{srv.Addr()})
	ctx := testCtx(t)
	_, err := c.Create(ctx, "/mine", []byte("stale"), framework.Ephemeral())
	require.NoError(t, err)
	p := newNode(t, c, "/mine", []byte("fresh"))
	require.NoError(t, p.Start(ctx))
	nodeIs(t, c, "/mine", "fresh", c.SessionID)
	require.NoError(t, p.Close(ctx))
	gone(t, c, "/mine")
}

// Close without a connection: the delete happens once the connection is back, in
// the same session.
func TestCloseWithoutConnection(t *testing.T) {
	srv := zkrtest.Server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	c := newClient(t, []string{proxy.Addr()}, framework.WithSessionTimeout(10*time.Second),
		framework.WithConnectionTimeout(200*time.Millisecond), framework.WithRetryPolicy(framework.RetryNTimes(1, 10*time.Millisecond)))
	other := newClient(t, []string{srv.Addr()})
	ctx := testCtx(t)
	p := newNode(t, c, "/closing/node", nil)
	require.NoError(t, p.Start(ctx))
	session := c.SessionID()

	proxy.Cut()
	err := p.Close(ctx)
	require.ErrorIs(t, err, framework.ErrDeleteInBackground)
	nodeIs(t, other, "/closing/node", "", func() int64 { return session })
	proxy.Restore()
	gone(t, other, "/closing/node")
	require.Equal(t, session, c.SessionID(), "deleted by the same session, not expired")
}

func TestProtectedSequential(t *testing.T) {
	srv := zkrtest.Server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	c := newClient(t, []string{proxy.Addr()}, framework.WithSessionTimeout(2*time.Second))
	other := newClient(t, []string{srv.Addr()})
	ctx := testCtx(t)
	p := newNode(t, c, "/registry/instance-", []byte("a"), Protected(), Sequential())
	require.NoError(t, p.Start(ctx))
	require.Regexp(t, `^/registry/_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-instance-\d{10}$`, p.Path())
	path := p.Path()

	require.NoError(t, proxy.ExpireSession(ctx, 2*time.Second))
	require.NoError(t, c.WaitConnected(ctx))
	nodeIs(t, other, path, "a", c.SessionID)
	require.Equal(t, path, p.Path(), "made again under the same name, as Curator does")
	names, _, err := other.Children(ctx, "/registry")
	require.NoError(t, err)
	require.Len(t, names, 1)
}

func TestPersistentNode(t *testing.T) {
	srv := zkrtest.Server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	c := newClient(t, []string{proxy.Addr()}, framework.WithSessionTimeout(2*time.Second))
	other := newClient(t, []string{srv.Addr()})
	ctx := testCtx(t)
	p := newNode(t, c, "/config/flag", []byte("on"), Persistent())
	require.NoError(t, p.Start(ctx))
	first := nodeIs(t, other, "/config/flag", "on", persistentOwner)

	require.NoError(t, proxy.ExpireSession(ctx, 2*time.Second))
	require.NoError(t, p.SetData(ctx, []byte("off")))
	again := nodeIs(t, other, "/config/flag", "off", persistentOwner)
	require.Equal(t, first.Czxid, again.Czxid, "the same node: a persistent node outlives the session")

	require.NoError(t, other.Delete(ctx, "/config/flag", -1))
	remade := nodeIs(t, other, "/config/flag", "off", persistentOwner)
	require.NotEqual(t, first.Czxid, remade.Czxid)

	require.NoError(t, p.Close(ctx))
	gone(t, other, "/config/flag")
}

func TestTTLNode(t *testing.T) {
	ctx := testCtx(t)
	plain := zktest.NewServer(t)
	c := newClient(t, []string{plain.Addr()})
	p := newNode(t, c, "/ttl/node", nil, TTL(time.Hour))
	require.ErrorIs(t, p.Start(ctx), framework.ErrTTLDisabled)
	require.Empty(t, p.Path())

	srv := zktest.NewServer(t, zktest.WithConfig("extendedTypesEnabled=true"), zktest.WithContainerCheckInterval(100*time.Millisecond))
	c = newClient(t, []string{srv.Addr()})
	q := newNode(t, c, "/ttl/node", []byte("x"), TTL(300*time.Millisecond))
	require.NoError(t, q.Start(ctx))
	first := nodeIs(t, c, "/ttl/node", "x", persistentOwner)
	require.Eventually(t, func() bool {
		_, stat, err := c.Get(ctx, "/ttl/node")
		return err == nil && stat.Czxid != first.Czxid
	}, wait, 20*time.Millisecond, "the server deleted the unused node, and it was made again")
	require.NoError(t, q.Close(ctx))
	gone(t, c, "/ttl/node")
}

func TestStartWaitsForAServer(t *testing.T) {
	srv := zktest.NewServer(t)
	addr := srv.Addr()
	srv.Stop()
	// However long the server takes to start again (a busy machine's JVM can take
	// more than a connection timeout), Start waits as long as its ctx allows.
	c, err := framework.New([]string{addr}, framework.WithRetryBeforeFirstConnection())
	require.NoError(t, err)
	defer c.Close()
	ctx := testCtx(t)
	p := newNode(t, c, "/late/node", []byte("x"))
	started := make(chan error, 1)
	go func() { started <- p.Start(ctx) }()
	require.NoError(t, srv.Start())
	require.NoError(t, <-started)
	nodeIs(t, c, "/late/node", "x", c.SessionID)
}

// Listeners hear the node made, gone and made again, in order; one may Close.
func TestListen(t *testing.T) {
	srv := zkrtest.Server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	c := newClient(t, []string{proxy.Addr()}, framework.WithSessionTimeout(2*time.Second))
	other := newClient(t, []string{srv.Addr()})
	ctx := testCtx(t)
	p := newNode(t, c, "/listen/node", nil)
	heard := make(chan Event, 10)
	p.Listen(func(ev Event) { heard <- ev })
	stop := p.Listen(func(Event) { t.Error("a stopped listener was called") })
	stop()
	p.Listen(nil)
	require.NoError(t, p.Start(ctx))
	require.Equal(t, Event{Path: "/listen/node", Present: true}, <-heard)

	require.NoError(t, proxy.ExpireSession(ctx, 2*time.Second))
	require.Equal(t, Event{Path: "/listen/node", Present: false}, <-heard, "found gone with its session")
	require.Equal(t, Event{Path: "/listen/node", Present: true}, <-heard, "made again")

	closed := make(chan error, 1)
	p.Listen(func(ev Event) {
		if !ev.Present {
			closed <- p.Close(context.Background())
		}
	})
	require.NoError(t, other.Delete(ctx, "/listen/node", -1))
	require.NoError(t, <-closed, "Close from a listener")
	gone(t, other, "/listen/node")
}
