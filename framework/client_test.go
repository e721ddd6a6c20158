package framework

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/zktest"
)

// A restart must fit in the session for some tests; on a loaded machine a JVM can
// take seconds to start, so they use sessions far longer than that.
var longSessions = zktest.WithSessionTimeouts(400*time.Millisecond, time.Minute)

const longSession = 30 * time.Second

func TestFirstSessionIsConnected(t *testing.T) {
	srv := sharedServer(t)
	c, err := New([]string{srv.Addr()}, WithSessionTimeout(2*time.Second))
	require.NoError(t, err)
	defer c.Close()
	log := listen(c)
	require.Equal(t, Latent, c.State())
	require.NoError(t, c.WaitConnected(testCtx(t)))
	log.waitFor(t, Connected)
	require.NotZero(t, c.SessionID())
	require.Equal(t, 2*time.Second, c.NegotiatedSessionTimeout(), "within the server's range, granted as asked")

	clamped := newClient(t, []string{srv.Addr()}, WithSessionTimeout(time.Minute))
	require.Equal(t, 4*time.Second, clamped.NegotiatedSessionTimeout(), "zktest's maximum is 20 ticks of 200 ms")
}

func TestServerRestartWithinSessionTimeoutKeepsTheSession(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t, longSessions)
	c := newClient(t, []string{srv.Addr()}, WithSessionTimeout(longSession))
	log := listen(c)
	sid := c.SessionID()

	srv.Stop()
	log.waitFor(t, Suspended)
	require.NoError(t, srv.Start())
	log.waitFor(t, Suspended, Reconnected)
	require.Equal(t, sid, c.SessionID(), "the same session came back")
}

func TestSessionExpiryIsLostThenReconnected(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	c := newClient(t, []string{proxy.Addr()}, WithSessionTimeout(2*time.Second))
	log := listen(c)
	sid := c.SessionID()
	ctx := testCtx(t)
	_, err := c.Create(ctx, "/eph", nil, Ephemeral())
	require.NoError(t, err)

	require.NoError(t, proxy.ExpireSession(ctx, 2*time.Second))
	require.NoError(t, c.WaitConnected(ctx))
	require.Eventually(t, func() bool {
		s := log.get()
		return len(s) > 0 && s[len(s)-1] == Reconnected
	}, wait, 10*time.Millisecond)
	// The black-hole may or may not be noticed before the server expires the session,
	// so Suspended may come first; Lost comes once, then Reconnected.
	states := log.get()
	if states[0] == Suspended {
		states = states[1:]
	}
	require.Equal(t, []ConnectionState{Lost, Reconnected}, states)
	require.NotEqual(t, sid, c.SessionID(), "a new session")
	ok, _, err := c.Exists(ctx, "/eph")
	require.NoError(t, err)
	require.False(t, ok, "the old session's ephemeral node is gone")
}

func TestServerDownPastSessionTimeoutIsLost(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t)
	c := newClient(t, []string{srv.Addr()}, WithSessionTimeout(2*time.Second))
	ctx := testCtx(t)
	_, err := c.Create(ctx, "/eph", nil, Ephemeral())
	if errors.Is(err, zk.ErrNodeExists) {
		// On a busy machine the connection can drop (2 s sessions) after the server
		// made the node and before its reply: the retry finds our own node.
		ok, stat, err := c.Exists(ctx, "/eph")
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, c.SessionID(), stat.EphemeralOwner, "the node the first attempt made")
	} else {
		require.NoError(t, err)
	}
	// The states from here on: a drop during the create would have its own.
	require.NoError(t, c.WaitConnected(ctx))
	log := listen(c)
	sid := c.SessionID()

	srv.Stop()
	log.waitFor(t, Suspended, Lost)
	require.NoError(t, srv.Start())
	log.waitFor(t, Suspended, Lost, Reconnected)
	require.NotEqual(t, sid, c.SessionID(), "the client gave up the old session for a new one")

	// The server kept the old session across its restart, but nobody uses it any more:
	// it expires, and its ephemeral node with it.
	require.Eventually(t, func() bool {
		ok, _, err := c.Exists(ctx, "/eph")
		return err == nil && !ok
	}, wait, 50*time.Millisecond)
	require.Equal(t, []ConnectionState{Suspended, Lost, Reconnected}, log.get(), "never two Lost")
}

func TestEnsembleMemberLossKeepsTheSession(t *testing.T) {
	t.Parallel()
	e := zktest.NewEnsemble(t, 3)
	c := newClient(t, e.Addrs(), WithSessionTimeout(4*time.Second))
	log := listen(c)
	sid := c.SessionID()
	server := c.Conn().Server()
	member := -1
	for i, a := range e.Addrs() {
		if a == server {
			member = i
		}
	}
	require.GreaterOrEqual(t, member, 0, "connected to %s, one of %v", server, e.Addrs())

	e.Stop(member)
	elected(t, e)
	log.waitFor(t, Suspended, Reconnected)
	require.Equal(t, sid, c.SessionID(), "the session moved to another member")
	require.NotEqual(t, server, c.Conn().Server())
	// Protected: the member the session moved to may lose the leader while it
	// elects a new one, and a plain create whose reply was lost so answers its
	// retry with ErrNodeExists (seen under load).
	p, err := c.Create(testCtx(t), "/after", nil, Protected(), Ephemeral())
	require.NoError(t, err)
	_, stat, err := c.Get(testCtx(t), p)
	require.NoError(t, err)
	require.Equal(t, sid, stat.EphemeralOwner, "the node is the moved session's")
}

func TestListenersHearInOrderAndStopFromWithin(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t, longSessions)
	c := newClient(t, []string{srv.Addr()}, WithSessionTimeout(longSession))
	var stop func()
	var heard []ConnectionState
	stop = c.Listen(func(s ConnectionState) {
		heard = append(heard, s) // only the client's one goroutine writes: no lock needed
		stop()
	})
	log := listen(c)
	srv.Stop()
	log.waitFor(t, Suspended)
	require.NoError(t, srv.Start())
	log.waitFor(t, Suspended, Reconnected)
	log.stop()
	require.NoError(t, c.Close())
	require.Equal(t, []ConnectionState{Suspended}, heard, "a listener that stopped itself hears nothing more")
}

// StateChanges counts the states the error policy counts as errors, and its channel
// closes on any state published after it was taken, before any listener has heard.
func TestStateChangesCountErrorsAndWakeOnAnyChange(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		policy ErrorPolicy
		errors int64 // of Suspended, Reconnected
	}{
		{"standard", StandardErrorPolicy, 1},
		{"session loss", SessionErrorPolicy, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := zktest.NewServer(t, longSessions)
			c := newClient(t, []string{srv.Addr()}, WithSessionTimeout(longSession), WithErrorPolicy(tc.policy))
			log := listen(c)
			errs0, next := c.ForRecipes().StateChanges()
			select {
			case <-next:
				t.Fatal("closed with no change")
			default:
			}
			srv.Stop()
			log.waitFor(t, Suspended)
			<-next // closed by the change
			require.NoError(t, srv.Start())
			log.waitFor(t, Suspended, Reconnected)
			errs, next := c.ForRecipes().StateChanges()
			require.Equal(t, errs0+tc.errors, errs)
			select {
			case <-next:
				t.Fatal("closed with no change since")
			default:
			}
		})
	}
}

// StateChanges' channel closes when Close begins, and a closed client's stays
// closed: a waiter that reads it is woken, and finds the client closed.
func TestStateChangesWakeOnClose(t *testing.T) {
	srv := sharedServer(t)
	c := newClient(t, []string{srv.Addr()})
	errs0, next := c.ForRecipes().StateChanges()
	select {
	case <-next:
		t.Fatal("closed with no change")
	default:
	}
	require.NoError(t, c.Close())
	<-next // closed by the close
	errs, after := c.ForRecipes().StateChanges()
	require.Equal(t, errs0, errs, "a close is no error state")
	<-after // closed already
}

func TestNamespacesAreSeparate(t *testing.T) {
	srv := sharedServer(t)
	a := newClient(t, []string{srv.Addr()}, WithNamespace("a"))
	b := newClient(t, []string{srv.Addr()}, WithNamespace("b/inner"))
	raw := newClient(t, []string{srv.Addr()})
	ctx := testCtx(t)

	p, err := a.Create(ctx, "/x/y", []byte("A"), CreatingParents())
	require.NoError(t, err)
	require.Equal(t, "/x/y", p, "paths come back without the namespace")
	ok, _, err := b.Exists(ctx, "/x/y")
	require.NoError(t, err)
	require.False(t, ok, "b does not see a's node")
	data, _, err := raw.Get(ctx, "/a/x/y")
	require.NoError(t, err)
	require.Equal(t, "A", string(data))
	_, stat, err := raw.Exists(ctx, "/b/inner")
	require.NoError(t, err)
	require.NotNil(t, stat, "the namespace node was created on first use")
	names, _, err := a.Children(ctx, "/")
	require.NoError(t, err)
	require.Equal(t, []string{"x"}, names)
}

// ZooKeeper reports a container's ephemeral owner as 0, like a persistent node's, so
// the kinds are told apart by what the server does with them once emptied.
func TestCreatingParentsStayAndParentContainersGo(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t, zktest.WithContainerCheckInterval(100*time.Millisecond))
	c := newClient(t, []string{srv.Addr()})
	ctx := testCtx(t)
	plain, err := c.Create(ctx, "/app/config/feature", nil, CreatingParents())
	require.NoError(t, err)
	boxed, err := c.Create(ctx, "/locks/l1/n-", nil, CreatingParentContainers(), Ephemeral(), Sequential())
	require.NoError(t, err)
	require.Regexp(t, `^/locks/l1/n-\d{10}$`, boxed)

	// The ordinary parents are emptied first: once the server has removed the
	// containers emptied after them, its check has run since both were empty.
	require.NoError(t, c.Delete(ctx, plain, -1))
	require.NoError(t, c.Delete(ctx, boxed, -1))
	require.Eventually(t, func() bool {
		ok, _, err := c.Exists(ctx, "/locks")
		return err == nil && !ok
	}, wait, 50*time.Millisecond, "empty containers are removed by the server")
	for _, p := range []string{"/app", "/app/config"} {
		ok, _, err := c.Exists(ctx, p)
		require.NoError(t, err)
		require.True(t, ok, "%s is an ordinary node: it stays when emptied", p)
	}
}

func TestDigestAuthAndCreatorOnlyACL(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t, longSessions)
	owner := newClient(t, []string{srv.Addr()}, WithSessionTimeout(longSession),
		WithAuth("digest", []byte("alice:secret")), WithACL(FixedACL(zk.AuthACL(zk.PermAll)...)))
	stranger := newClient(t, []string{srv.Addr()})
	ctx := testCtx(t)

	_, err := owner.Create(ctx, "/private", []byte("p"))
	require.NoError(t, err)
	_, _, err = stranger.Get(ctx, "/private")
	require.ErrorIs(t, err, zk.ErrNoAuth, "no credentials, no read")
	err = stranger.Delete(ctx, "/private", -1)
	require.NoError(t, err, "delete needs permission on the parent, which is open")

	_, err = owner.Create(ctx, "/private", []byte("p"))
	require.NoError(t, err)
	_, err = owner.Create(ctx, "/private/child", nil)
	require.NoError(t, err)
	require.ErrorIs(t, stranger.Delete(ctx, "/private/child", -1), zk.ErrNoAuth)

	// The credentials hold on a new connection of the same session...
	log := listen(owner)
	srv.Stop()
	log.waitFor(t, Suspended)
	require.NoError(t, srv.Start())
	log.waitFor(t, Suspended, Reconnected)
	_, _, err = owner.Get(ctx, "/private")
	require.NoError(t, err)
}

func TestAuthHoldsOnANewSession(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t)
	owner := newClient(t, []string{srv.Addr()}, WithSessionTimeout(2*time.Second),
		WithAuth("digest", []byte("alice:secret")), WithACL(FixedACL(zk.AuthACL(zk.PermAll)...)))
	ctx := testCtx(t)
	_, err := owner.Create(ctx, "/private", []byte("p"))
	require.NoError(t, err)

	// Down past the session timeout: the client gives the session up and makes a new
	// connection, which must send the credentials again before anything else.
	log := listen(owner)
	srv.Stop()
	log.waitFor(t, Suspended, Lost)
	require.NoError(t, srv.Start())
	log.waitFor(t, Suspended, Lost, Reconnected)
	data, _, err := owner.Get(ctx, "/private")
	require.NoError(t, err)
	require.Equal(t, "p", string(data))
}

func TestCloseReleasesABlockedRetry(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t)
	c := newClient(t, []string{srv.Addr()}, WithRetryPolicy(RetryForever(10*time.Millisecond)))
	srv.Stop()
	done := make(chan error, 1)
	go func() {
		_, _, err := c.Get(context.Background(), "/x")
		done <- err
	}()
	require.NoError(t, c.Close())
	select {
	case err := <-done:
		require.ErrorIs(t, err, ErrClosed)
	case <-time.After(wait):
		t.Fatal("Get still blocked after Close")
	}
	_, _, err := c.Get(context.Background(), "/x")
	require.ErrorIs(t, err, ErrClosed, "operations after Close")
	require.ErrorIs(t, c.WaitConnected(context.Background()), ErrClosed)
	require.NoError(t, c.Close(), "Close is idempotent")
}

func TestRetryStopsWithItsContext(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t)
	c := newClient(t, []string{srv.Addr()}, WithRetryPolicy(RetryForever(10*time.Millisecond)),
		WithConnectionTimeout(100*time.Millisecond))
	srv.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, _, err := c.Get(ctx, "/x")
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestRetryRetriesOnlyConnectionErrors(t *testing.T) {
	srv := sharedServer(t)
	c := newClient(t, []string{srv.Addr()}, WithRetryPolicy(RetryNTimes(3, 0)))
	ctx := testCtx(t)
	calls := 0
	err := c.Retry(ctx, func(context.Context) error { calls++; return zk.ErrNoNode })
	require.ErrorIs(t, err, zk.ErrNoNode)
	require.Equal(t, 1, calls)

	calls = 0
	err = c.Retry(ctx, func(context.Context) error { calls++; return zk.ErrConnectionClosed })
	require.ErrorIs(t, err, zk.ErrConnectionClosed)
	require.Equal(t, 4, calls, "the first attempt and three retries")

	calls = 0
	err = c.Retry(ctx, func(context.Context) error {
		calls++
		if calls < 3 {
			return zk.ErrSessionMoved
		}
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, 3, calls)
}

func TestGuaranteedDeleteFinishesInTheBackground(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t, longSessions)
	c := newClient(t, []string{srv.Addr()}, WithSessionTimeout(longSession),
		WithConnectionTimeout(100*time.Millisecond), WithRetryPolicy(RetryNTimes(0, 0)))
	observer := newClient(t, []string{srv.Addr()})
	ctx := testCtx(t)
	_, err := c.Create(ctx, "/doomed", nil)
	require.NoError(t, err)

	log := listen(c)
	srv.Stop()
	log.waitFor(t, Suspended)
	err = c.Delete(ctx, "/doomed", -1, Guaranteed())
	require.ErrorIs(t, err, ErrDeleteInBackground)
	require.NoError(t, srv.Start())
	require.Eventually(t, func() bool {
		ok, _, err := observer.Exists(ctx, "/doomed")
		return err == nil && !ok
	}, wait, 20*time.Millisecond, "the delete completed once the server was back")
}

func TestCloseFromAListener(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t)
	c := newClient(t, []string{srv.Addr()}, WithSessionTimeout(4*time.Second))
	closed := make(chan error, 1)
	c.Listen(func(s ConnectionState) {
		if s == Suspended {
			closed <- c.Close()
		}
	})
	srv.Stop()
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(wait):
		t.Fatal("Close called from a listener did not return")
	}
	require.ErrorIs(t, c.WaitConnected(context.Background()), ErrClosed)
}

func TestASilentServerDoesNotHoldTheClient(t *testing.T) {
	// Servers that accept a connection and never answer, as a ZooKeeper caught in
	// its start-up can: the client must move on to a server that answers, within its
	// connection timeout, not go-zookeeper's ten receive timeouts. (It retries before
	// its first connection, so that WaitConnected waits past each silent server's
	// connection timeout, for as long as ctx allows.)
	silent1, _ := silentServer(t)
	silent2, _ := silentServer(t)
	silent := []string{silent1, silent2}
	srv := sharedServer(t)
	c, err := New(append(silent, srv.Addr()), WithSessionTimeout(20*time.Second), WithConnectionTimeout(time.Second),
		WithRetryBeforeFirstConnection())
	require.NoError(t, err)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // under 10 receive timeouts (133 s)
	defer cancel()
	require.NoError(t, c.WaitConnected(ctx))
	require.Equal(t, srv.Addr(), c.Conn().Server())
}

// A handle once closed makes no connection, even when go-zookeeper dials after its
// Close or while it runs: such a connection would keep an abandoned session alive on
// its pings, and Client.Close would wait for go-zookeeper's loop forever.
func TestAClosedHandleConnectsNoMore(t *testing.T) {
	srv := sharedServer(t)
	var during atomic.Pointer[func()] // runs inside the next dial
	var dialled atomic.Pointer[net.Conn]
	c := newClient(t, []string{srv.Addr()}, WithDialer(func(network, addr string, timeout time.Duration) (net.Conn, error) {
		if f := during.Swap(nil); f != nil {
			(*f)()
		}
		conn, err := net.DialTimeout(network, addr, timeout)
		if err == nil {
			dialled.Store(&conn)
		}
		return conn, err
	}))
	closed := func() *handle {
		h := &handle{log: c.log}
		h.ctx, h.cancel = context.WithCancel(context.Background())
		return h
	}

	h := closed()
	h.cancel()
	dialled.Store(nil)
	_, err := c.connect(h, "tcp", srv.Addr(), time.Second)
	require.ErrorIs(t, err, errHandleClosed, "closed before the dial")
	require.Nil(t, dialled.Load(), "no connection made")

	h = closed()
	var cancel func() = h.cancel
	during.Store(&cancel)
	_, err = c.connect(h, "tcp", srv.Addr(), time.Second)
	require.ErrorIs(t, err, errHandleClosed, "closed during the dial")
	conn := dialled.Load()
	require.NotNil(t, conn)
	_, err = (*conn).Write([]byte{0})
	require.ErrorIs(t, err, net.ErrClosed, "the connection made is closed")
}
