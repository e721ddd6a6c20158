package mutex

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

func TestServerRestartWhileHeldAndAwaited(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	opts := []framework.Option{framework.WithSessionTimeout(4 * time.Second)}
	holderClient := newClient(t, []string{srv.Addr()}, opts...)
	holder := newMutex(t, holderClient, "/locks/restart")
	require.NoError(t, holder.Acquire(ctx))

	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for range 3 {
		m := newMutex(t, newClient(t, []string{srv.Addr()}, opts...), "/locks/restart")
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				err := m.Acquire(ctx)
				if err == nil {
					err = m.Release(ctx)
				}
				if err == nil || ctx.Err() != nil {
					errs <- err
					return
				}
				// A hold lost to the restart is reported; the value is ready again.
				if !errors.Is(err, ErrLost) {
					errs <- err
					return
				}
			}
		}()
	}
	require.Eventually(t, func() bool { return len(children(t, holderClient, "/locks/restart")) == 4 }, wait, 5*time.Millisecond)

	srv.Stop()
	select {
	case <-holder.Lost():
	case <-time.After(wait):
		t.Fatal("the holder's Lost did not close on Suspended")
	}
	require.NoError(t, srv.Start())
	err := holder.Release(ctx)
	require.ErrorIs(t, err, ErrLost, "the hold was in doubt: Release says so")

	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Empty(t, children(t, holderClient, "/locks/restart"), "no orphan")
}

func TestWaiterStartsAgainAfterItsSessionExpired(t *testing.T) {
	srv := zkrtest.Server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	holder := newMutex(t, c, "/locks/w")
	require.NoError(t, holder.Acquire(ctx))

	waiterClient := newClient(t, []string{proxy.Addr()}, framework.WithSessionTimeout(2*time.Second))
	waiter := newMutex(t, waiterClient, "/locks/w")
	done := make(chan error, 1)
	go func() { done <- waiter.Acquire(ctx) }()
	require.Eventually(t, func() bool { return len(children(t, c, "/locks/w")) == 2 }, wait, 5*time.Millisecond)
	first := children(t, c, "/locks/w")

	require.NoError(t, proxy.ExpireSession(ctx, 2*time.Second))
	require.NoError(t, waiterClient.WaitConnected(ctx))
	require.Eventually(t, func() bool {
		now := children(t, c, "/locks/w")
		return len(now) == 2 && !(now[0] == first[0] && now[1] == first[1]) && !(now[0] == first[1] && now[1] == first[0])
	}, wait, 10*time.Millisecond, "the waiter queued again with a new node")

	require.NoError(t, holder.Release(ctx))
	require.NoError(t, <-done)
	require.Equal(t, waiterClient.SessionID(), ownerOf(t, c, waiter.Node()), "held on a node of the live session")
	require.NoError(t, waiter.Release(ctx))
}

func ownerOf(t *testing.T, c *framework.Client, node string) int64 {
	t.Helper()
	_, stat, err := c.Exists(testCtx(t), node)
	require.NoError(t, err)
	return stat.EphemeralOwner
}

func TestLockPathIsAContainerRemovedWhenEmpty(t *testing.T) {
	srv := zktest.NewServer(t, zktest.WithContainerCheckInterval(100*time.Millisecond))
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	m := newMutex(t, c, "/app/locks/job")
	for range 3 {
		require.NoError(t, m.Acquire(ctx))
		require.NoError(t, m.Release(ctx))
	}
	require.Eventually(t, func() bool {
		ok, _, err := c.Exists(ctx, "/app")
		return err == nil && !ok
	}, wait, 50*time.Millisecond, "the container parents go once empty")
}

func TestRevocation(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	released := make(chan error, 1)
	var holder *Mutex
	// The listener releases at once, from its own goroutine.
	holder = newMutex(t, c, "/locks/rev", WithID("holder"), WithRevocationListener(func() { released <- holder.Release(ctx) }))
	require.NoError(t, holder.Acquire(ctx))

	other := newClient(t, []string{srv.Addr()})
	ps, err := newMutex(t, other, "/locks/rev").Participants(ctx)
	require.NoError(t, err)
	require.Len(t, ps, 1)
	require.Equal(t, "holder", ps[0].ID)
	require.True(t, ps[0].Holder)
	require.NoError(t, Revoke(ctx, other, ps[0].Node))
	select {
	case err := <-released:
		require.NoError(t, err)
	case <-time.After(wait):
		t.Fatal("the holder did not hear the revocation, or its Release did not return")
	}
	require.False(t, holder.IsAcquired())
	require.ErrorIs(t, Revoke(ctx, other, ps[0].Node), framework.ErrNoNode)
}

func TestDeletedNodeLosesTheHoldWithAListener(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	m := newMutex(t, c, "/locks/del", WithRevocationListener(func() {}))
	require.NoError(t, m.Acquire(ctx))
	require.NoError(t, c.Delete(ctx, m.Node(), -1))
	select {
	case <-m.Lost():
	case <-time.After(wait):
		t.Fatal("Lost did not close when our node was deleted")
	}
	require.ErrorIs(t, m.Release(ctx), ErrLost)
}

func TestParticipantsInQueueOrder(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	holder := newMutex(t, c, "/locks/p", WithID("first"))
	require.NoError(t, holder.Acquire(ctx))
	waiter := newMutex(t, newClient(t, []string{srv.Addr()}), "/locks/p", WithID("second"))
	waitCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- waiter.Acquire(waitCtx) }()
	require.Eventually(t, func() bool { return len(children(t, c, "/locks/p")) == 2 }, wait, 5*time.Millisecond)

	ps, err := holder.Participants(ctx)
	require.NoError(t, err)
	require.Len(t, ps, 2)
	require.Equal(t, []string{"first", "second"}, []string{ps[0].ID, ps[1].ID})
	require.Equal(t, []bool{true, false}, []bool{ps[0].Holder, ps[1].Holder})
	require.Equal(t, holder.Node(), ps[0].Node)
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	require.NoError(t, holder.Release(ctx))
}

func TestSessionErrorPolicyKeepsTheHoldThroughSuspended(t *testing.T) {
	// A session far longer than a restart, even on a loaded machine.
	srv := zktest.NewServer(t, zktest.WithSessionTimeouts(400*time.Millisecond, time.Minute))
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()}, framework.WithSessionTimeout(30*time.Second),
		framework.WithErrorPolicy(framework.SessionErrorPolicy))
	states := make(chan framework.ConnectionState, 10)
	c.Listen(func(s framework.ConnectionState) { states <- s })
	m := newMutex(t, c, "/locks/sp")
	require.NoError(t, m.Acquire(ctx))

	srv.Stop()
	require.Equal(t, framework.Suspended, <-states)
	require.NoError(t, srv.Start())
	require.Equal(t, framework.Reconnected, <-states)
	select {
	case <-m.Lost():
		t.Fatal("Lost closed on Suspended under the session error policy")
	default:
	}
	require.True(t, m.IsAcquired())
	require.NoError(t, m.Release(ctx))
}

// Curator's CURATOR-604: the client gave its session up (Lost after a whole session
// timeout without a server), but the restarted server brought the old session back
// with its nodes. The waiter's old node comes first in line; it is not ours any more,
// and the lock must not be granted on it.
func TestNoLockOnANodeOfAnAbandonedSession(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	holderClient := newClient(t, []string{srv.Addr()}, framework.WithSessionTimeout(4*time.Second))
	holder := newMutex(t, holderClient, "/locks/604")
	require.NoError(t, holder.Acquire(ctx))

	waiterClient := newClient(t, []string{srv.Addr()}, framework.WithSessionTimeout(2*time.Second))
	states := make(chan framework.ConnectionState, 10)
	waiterClient.Listen(func(s framework.ConnectionState) { states <- s })
	waiter := newMutex(t, waiterClient, "/locks/604")
	done := make(chan error, 1)
	go func() { done <- waiter.Acquire(ctx) }()
	require.Eventually(t, func() bool { return len(children(t, holderClient, "/locks/604")) == 2 }, wait, 5*time.Millisecond)
	oldSession := waiterClient.SessionID()

	srv.Stop()
	require.Equal(t, framework.Suspended, <-states)
	require.Equal(t, framework.Lost, <-states, "the waiter's client gives its session up")
	require.NoError(t, srv.Start())
	require.Equal(t, framework.Reconnected, <-states)
	require.NotEqual(t, oldSession, waiterClient.SessionID())

	_ = holder.Release(ctx) // lost to Suspended, but its node goes
	require.NoError(t, <-done)
	require.Equal(t, waiterClient.SessionID(), ownerOf(t, holderClient, waiter.Node()),
		"the lock is held on a node of the live session, never the abandoned one's")
	require.NoError(t, waiter.Release(ctx))
}

func TestClientCloseLosesTheHold(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	c, err := framework.New([]string{srv.Addr()})
	require.NoError(t, err)
	require.NoError(t, c.WaitConnected(ctx))
	m := newMutex(t, c, "/locks/closing")
	require.NoError(t, m.Acquire(ctx))
	require.NoError(t, c.Close())
	select {
	case <-m.Lost():
	case <-time.After(wait):
		t.Fatal("Lost did not close when the client closed")
	}
	require.False(t, m.IsAcquired())
	require.ErrorIs(t, m.Release(ctx), ErrLost)
}

// A holder watches its node: an ACL that refuses us READ on our own node refuses
// that watch, so the hold is lost as soon as it is granted (its token comes from
// the create's reply, and the grant waits for no read), says why, and its release
// leaves no node. The watch is set with a read for such a node, not with a
// setWatches, which the server does not refuse: a server from 3.9.2 on would then
// keep the node's notifications from us, and the hold would never hear its
// deletion.
func TestAnUnreadableNodeLosesTheHold(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()}, framework.WithACL(unreadableLockNodes))
	m := newMutex(t, c, "/locks/unreadable")
	require.NoError(t, m.Acquire(ctx))
	select {
	case <-m.Lost():
	case <-ctx.Done():
		t.Fatal("a hold whose node cannot be watched was never lost")
	}
	err := m.Release(ctx)
	require.ErrorIs(t, err, ErrLost)
	require.ErrorIs(t, err, framework.ErrNoAuth, "why it was lost")
	kids, _, err := c.Children(ctx, "/locks/unreadable")
	require.NoError(t, err)
	require.Empty(t, kids, "no node left")
}

// lockNodesACL gives lock participants' nodes its ACL, and every other node the
// open one.
type lockNodesACL []framework.ACL

// unreadableLockNodes: participants' nodes without READ.
var unreadableLockNodes = lockNodesACL(framework.WorldACL(framework.PermWrite | framework.PermAdmin))

// creatorOnlyLockNodes: participants' nodes that only their creator's credentials
// may use.
var creatorOnlyLockNodes = lockNodesACL(framework.AuthACL(framework.PermAll))

func (lockNodesACL) DefaultACL() []framework.ACL { return framework.WorldACL(framework.PermAll) }
func (a lockNodesACL) ACLForPath(p string) []framework.ACL {
	if strings.Contains(path.Base(p), LockName) {
		return a
	}
	return nil
}

// A holder whose node another client deletes loses the hold as soon as the deletion
// is heard: the waiter behind it, on the same connection, is granted the lock only
// once the old holder knows it lost it (the notification comes before the listing
// that grants). Two holders never believe they hold, and the tokens tell them apart.
func TestADeletedNodeEndsTheHold(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	op := newClient(t, []string{srv.Addr()})
	a := newMutex(t, c, "/locks/deleted", WithID("a"))
	b := newMutex(t, c, "/locks/deleted", WithID("b"))
	require.NoError(t, a.Acquire(ctx))
	work, cancel := a.Context(ctx)
	defer cancel()
	token := a.FencingToken()
	granted := make(chan error, 1)
	go func() { granted <- b.Acquire(ctx) }()
	zkrtest.QueueLen(t, op, "/locks/deleted", 2)

	zkrtest.DeleteHolder(t, op, a.Node())
	require.NoError(t, <-granted)
	require.False(t, a.IsAcquired(), "the old holder knew before the new one held")
	zkrtest.RequireLostToDeletion(t, work, ErrLost)
	require.Greater(t, b.FencingToken(), token)
	err := a.Release(ctx)
	require.ErrorIs(t, err, ErrLost)
	require.ErrorContains(t, err, "our node was deleted while our session lived")
	require.True(t, b.IsAcquired(), "one holder again")
	require.NoError(t, b.Release(ctx))
}

// A holder whose session expired (a process paused past its session timeout, here a
// connection held silent) is told that the session expired, not that someone
// deleted its node, by its Context and by Release.
func TestAHoldLostToAnExpirySaysSo(t *testing.T) {
	srv := zkrtest.Server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	ctx := testCtx(t)
	c := newClient(t, []string{proxy.Addr()}, framework.WithSessionTimeout(2*time.Second))
	m := newMutex(t, c, "/locks/expired")
	require.NoError(t, m.Acquire(ctx))
	work, cancel := m.Context(ctx)
	defer cancel()
	session := c.SessionID()

	require.NoError(t, proxy.ExpireSession(ctx, 2*time.Second))
	require.NoError(t, c.WaitConnected(ctx))
	require.Eventually(t, func() bool { return c.SessionID() != session }, wait, 10*time.Millisecond)
	<-work.Done()
	err := m.Release(ctx)
	for _, err := range []error{err, context.Cause(work)} {
		require.ErrorIs(t, err, ErrLost)
		require.NotErrorIs(t, err, framework.ErrNoNode, "%v", err)
		require.NotContains(t, err.Error(), "deleted")
	}
	require.ErrorIs(t, err, framework.ErrSessionExpired, "%v", err)
	require.ErrorContains(t, err, "our session expired")
}

// A waiter watches the node ahead with a watch of its connection's own
// (framework.Plumbing.WatchData), which closes on the reader's goroutine the moment
// the connection ends, before the client's state says Suspended. Cut while the
// holder releases, under the session error policy (its session and node stay) and a
// policy that never retries, it lists again only once the state has changed, so its
// listing waits for the connection instead of failing on the ended one, and it holds.
// Before, it listed at once and its Acquire failed ("the connection ended before
// the reply").
func TestAWaiterCutWithoutRetriesStillHolds(t *testing.T) {
	srv := zktest.NewServer(t, zktest.WithSessionTimeouts(400*time.Millisecond, time.Minute))
	ctx := testCtx(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	holder := newMutex(t, newClient(t, []string{srv.Addr()}), "/locks/cut-noretry")
	require.NoError(t, holder.Acquire(ctx))
	c := newClient(t, []string{proxy.Addr()}, framework.WithSessionTimeout(30*time.Second),
		framework.WithErrorPolicy(framework.SessionErrorPolicy),
		framework.WithRetryPolicy(framework.RetryNTimes(0, 0)))
	states := make(chan framework.ConnectionState, 10)
	c.Listen(func(s framework.ConnectionState) { states <- s })
	waiter := newMutex(t, c, "/locks/cut-noretry")
	acquired := make(chan error, 1)
	go func() { acquired <- waiter.Acquire(ctx) }()
	require.Eventually(t, func() bool { return len(children(t, c, "/locks/cut-noretry")) == 2 }, wait, 5*time.Millisecond)
	// The waiter's watch on the node ahead is set (the server lists it for the
	// waiter's session): nothing of the waiter's is in flight when the cut comes.
	ahead := "/locks/cut-noretry/" + slices.MinFunc(children(t, c, "/locks/cut-noretry"), func(a, b string) int {
		return strings.Compare(a[len(a)-10:], b[len(b)-10:])
	})
	sid := fmt.Sprintf("0x%x", c.SessionID())
	require.Eventually(t, func() bool {
		out, err := srv.FourLetter(ctx, "wchp")
		if err != nil {
			return false
		}
		i := strings.Index(out, ahead+"\n")
		return i >= 0 && strings.Contains(strings.SplitN(out[i+len(ahead)+1:], "/", 2)[0], sid)
	}, wait, 5*time.Millisecond, "the waiter's watch on %s", ahead)
	// The server answers a session's requests in order: once this reply is in, so is
	// the watch's, which could still be on its way when the server lists the watch.
	_, _, err := c.Exists(ctx, "/locks/cut-noretry")
	require.NoError(t, err)

	proxy.Cut()
	require.Equal(t, framework.Suspended, <-states)
	require.NoError(t, holder.Release(ctx))
	proxy.Restore()
	require.Equal(t, framework.Reconnected, <-states)
	select {
	case err := <-acquired:
		require.NoError(t, err, "the waiter gave up on a cut it should have waited through")
	case <-ctx.Done():
		t.Fatal("the waiter did not hold after its connection came back")
	}
	require.True(t, waiter.IsAcquired())
	require.NoError(t, waiter.Release(ctx))
}

// A holder's watch on its own node lasts the session, as go-zookeeper's watches do:
// set with a request of the client's own, it is set again on every new connection,
// as of the last zxid the client read, so that a deletion made while the client was
// cut off ends the hold as soon as the client is back. Under the session error
// policy a cut alone loses nothing: the hold stands through one, its watch set again
// (the server lists it for the session), and its node's deletion while cut off
// loses it after the next.
func TestAHoldersWatchLastsItsSession(t *testing.T) {
	srv := zktest.NewServer(t, zktest.WithSessionTimeouts(400*time.Millisecond, time.Minute))
	ctx := testCtx(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	c := newClient(t, []string{proxy.Addr()}, framework.WithSessionTimeout(30*time.Second),
		framework.WithErrorPolicy(framework.SessionErrorPolicy))
	op := newClient(t, []string{srv.Addr()})
	states := make(chan framework.ConnectionState, 10)
	c.Listen(func(s framework.ConnectionState) { states <- s })
	m := newMutex(t, c, "/locks/lasting")
	require.NoError(t, m.Acquire(ctx))
	sid := fmt.Sprintf("0x%x", c.SessionID())
	watched := func() bool {
		out, err := srv.FourLetter(ctx, "wchp")
		if err != nil {
			return false
		}
		i := strings.Index(out, m.Node()+"\n")
		return i >= 0 && strings.Contains(strings.SplitN(out[i+len(m.Node())+1:], "/", 2)[0], sid)
	}
	cut := func() {
		t.Helper()
		proxy.Cut()
		require.Equal(t, framework.Suspended, <-states)
		// The server drops the connection's watches once it sees it closed.
		require.Eventually(t, func() bool { return !watched() }, wait, 5*time.Millisecond, "the cut connection's watch gone")
	}
	restore := func() {
		t.Helper()
		proxy.Restore()
		require.Equal(t, framework.Reconnected, <-states)
	}
	require.Eventually(t, watched, wait, 5*time.Millisecond, "the holder's watch on %s", m.Node())

	cut()
	restore()
	require.Eventually(t, watched, wait, 5*time.Millisecond, "the holder's watch set again on the new connection")
	require.True(t, m.IsAcquired(), "a cut alone loses nothing under the session policy")

	cut()
	zkrtest.DeleteHolder(t, op, m.Node())
	restore()
	select {
	case <-m.Lost():
	case <-ctx.Done():
		t.Fatal("a deletion made while the holder was cut off was never heard")
	}
	err := m.Release(ctx)
	require.ErrorIs(t, err, ErrLost)
	require.ErrorContains(t, err, "our node was deleted while our session lived")
}

// A waiter whose own node anyone may read, queued behind a node it may not read
// (another client's, made under that client's credentials), is refused at once,
// as Curator's waiter is: its watch on that node is a read. A setWatches, which the
// server does not refuse, would leave it waiting for good on a server from 3.9.2 on,
// which keeps that node's notifications from it. Its node is deleted.
func TestAWaiterBehindANodeItCannotReadIsRefused(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	alice := newClient(t, []string{srv.Addr()},
		framework.WithAuth("digest", []byte("alice:secret")), framework.WithACL(creatorOnlyLockNodes))
	bob := newClient(t, []string{srv.Addr()})
	a := newMutex(t, alice, "/locks/mixed")
	require.NoError(t, a.Acquire(ctx))
	b := newMutex(t, bob, "/locks/mixed")
	err := b.Acquire(ctx)
	require.ErrorIs(t, err, framework.ErrNoAuth, "refused, not left waiting")
	require.Equal(t, []string{path.Base(a.Node())}, children(t, bob, "/locks/mixed"), "the waiter's node is deleted")
	require.NoError(t, a.Release(ctx))
}
