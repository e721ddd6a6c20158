package election

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/recipes/internal/lifecycle"
	"github.com/zkrecipes/zkrecipes/recipes/internal/lockqueue"
	"github.com/zkrecipes/zkrecipes/zktest"
)

func TestLatchLeadershipFollowsStartOrder(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	ref := newReferee(t)
	var latches []*Latch
	for i := range 3 {
		// NotifyOnClose: the referee hears that a closed leader stopped leading.
		l := newLatch(t, newClient(t, []string{srv.Addr()}), "/election/basic", WithID(fmt.Sprint("L", i)), NotifyOnClose())
		ref.watch(fmt.Sprint("L", i), l)
		require.NoError(t, l.Start(ctx))
		latches = append(latches, l)
	}
	require.NoError(t, latches[0].Await(ctx))
	leader, err := latches[2].Leader(ctx)
	require.NoError(t, err)
	require.Equal(t, "L0", leader.ID)

	require.NoError(t, latches[1].Close(ctx), "closing a non-leader")
	require.True(t, latches[0].IsLeader(), "changes nothing")
	require.NoError(t, latches[0].Close(ctx), "closing the leader")
	require.NoError(t, latches[2].Await(ctx), "hands over")
	require.False(t, latches[0].IsLeader())
	require.NoError(t, latches[0].Close(ctx), "a second Close")
}

func TestNobodyLeadsWhileLostAndOneLeadsAfter(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	ref := newReferee(t)
	var latches []*Latch
	var clients []*framework.Client
	for i := range 10 {
		c := newClient(t, []string{srv.Addr()}, framework.WithSessionTimeout(2*time.Second))
		l := newLatch(t, c, "/election/lost", NotifyOnClose())
		ref.watch(fmt.Sprint(i), l)
		require.NoError(t, l.Start(ctx))
		latches, clients = append(latches, l), append(clients, c)
	}
	require.NoError(t, latches[0].Await(ctx))

	srv.Stop()
	require.Eventually(t, func() bool {
		for _, c := range clients {
			if c.State() != framework.Lost {
				return false
			}
		}
		return true
	}, wait, 10*time.Millisecond)
	n, _ := leaders(latches)
	require.Zero(t, n, "nobody leads without a session")

	require.NoError(t, srv.Start())
	require.Eventually(t, func() bool { n, _ := leaders(latches); return n == 1 }, wait, 10*time.Millisecond)
	// The old sessions expire on the server meanwhile; through it all, one leader.
	require.Eventually(t, func() bool {
		c := clients[0]
		names, _, err := c.Children(ctx, "/election/lost")
		return err == nil && len(names) == 10
	}, wait, 20*time.Millisecond, "the old sessions' nodes are gone, one new node each")
	n, _ = leaders(latches)
	require.Equal(t, 1, n)
}

func TestLeaderSessionExpiry(t *testing.T) {
	srv := zkrtest.Server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	ctx := testCtx(t)
	ref := newReferee(t)
	victimClient := newClient(t, []string{proxy.Addr()}, framework.WithSessionTimeout(2*time.Second))
	victim := newLatch(t, victimClient, "/election/expiry", WithID("victim"), NotifyOnClose())
	ref.watch("victim", victim)
	require.NoError(t, victim.Start(ctx))
	require.NoError(t, victim.Await(ctx))
	oldNode := victim.node.Path
	other := newLatch(t, newClient(t, []string{srv.Addr()}), "/election/expiry", WithID("other"), NotifyOnClose())
	ref.watch("other", other)
	require.NoError(t, other.Start(ctx))

	require.NoError(t, proxy.ExpireSession(ctx, 2*time.Second))
	require.NoError(t, other.Await(ctx), "another leads")
	require.False(t, victim.IsLeader(), "the old leader heard false")
	require.NoError(t, victimClient.WaitConnected(ctx))
	require.Eventually(t, func() bool {
		victim.mu.Lock()
		defer victim.mu.Unlock()
		return victim.node != nil && victim.node.Path != oldNode
	}, wait, 10*time.Millisecond, "the old leader rejoined with a new node")
	require.Equal(t, 1, ref.termsOf("victim"), "and never led again on its old node")
}

func TestEnsembleLeaderServerStopped(t *testing.T) {
	e := zktest.NewEnsemble(t, 3)
	ctx := testCtx(t)
	ref := newReferee(t)
	var latches []*Latch
	var clients []*framework.Client
	for i := range 3 {
		c := newClient(t, e.Addrs(), framework.WithSessionTimeout(4*time.Second))
		l := newLatch(t, c, "/election/ensemble", NotifyOnClose())
		ref.watch(fmt.Sprint(i), l)
		require.NoError(t, l.Start(ctx))
		latches, clients = append(latches, l), append(clients, c)
	}
	require.NoError(t, latches[0].Await(ctx))
	server := clients[0].Conn().Server()
	for i, a := range e.Addrs() {
		if a == server {
			e.Stop(i)
		}
	}
	require.Eventually(t, func() bool {
		n, _ := leaders(latches)
		return n == 1 && clients[0].State().IsConnected()
	}, wait, 10*time.Millisecond, "exactly one leader after recovery")
}

func TestAwaitWithADeadline(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	ref := newReferee(t)
	first := newLatch(t, c, "/election/await", NotifyOnClose())
	ref.watch("first", first)
	require.NoError(t, first.Start(ctx))
	require.NoError(t, first.Await(ctx))
	second := newLatch(t, c, "/election/await", NotifyOnClose())
	ref.watch("second", second)
	require.ErrorIs(t, second.Await(ctx), ErrNotStarted)
	require.NoError(t, second.Start(ctx))
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, second.Await(short), context.DeadlineExceeded)
	require.NoError(t, second.Close(ctx))
	require.ErrorIs(t, second.Await(ctx), ErrClosed)
}

func TestListenerCountsAndNotifyOnClose(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	for _, notify := range []bool{false, true} {
		var opts []Option
		if notify {
			opts = append(opts, NotifyOnClose())
		}
		l := newLatch(t, c, fmt.Sprint("/election/notify-", notify), opts...)
		var up, down atomic.Int32
		l.Listen(func(leads bool) {
			if leads {
				up.Add(1)
			} else {
				down.Add(1)
			}
		})
		require.NoError(t, l.Start(ctx))
		require.NoError(t, l.Await(ctx))
		require.NoError(t, l.Close(ctx))
		require.Equal(t, int32(1), up.Load())
		want := int32(0)
		if notify {
			want = 1
		}
		require.Equal(t, want, down.Load(), "NotifyOnClose=%v", notify)
	}
}

func TestLatchStartedBeforeAnyServer(t *testing.T) {
	srv, c := beforeServer(t)
	l := newLatch(t, c, "/election/early")
	var up atomic.Int32
	l.Listen(func(leads bool) {
		if leads {
			up.Add(1)
		}
	})
	ctx := testCtx(t)
	started := make(chan error, 1)
	go func() { started <- l.Start(ctx) }()
	require.NoError(t, srv.Start())
	require.NoError(t, <-started)
	require.NoError(t, l.Await(ctx))
	// Await may return before the listener has heard it.
	require.Eventually(t, func() bool { return up.Load() == 1 }, wait, time.Millisecond)
}

func TestCloseWhileJoiningLeavesNoNode(t *testing.T) {
	for _, kind := range participantKinds {
		t.Run(kind.name, func(t *testing.T) {
			srv, c := beforeServer(t)
			p := kind.make(t, c, "/election/close-early")
			ctx := testCtx(t)
			started := make(chan error, 1)
			go func() { started <- p.Start(ctx) }()
			require.Eventually(t, p.joining, wait, time.Millisecond)
			require.NoError(t, p.Close(ctx))
			require.ErrorIs(t, <-started, ErrClosed)
			require.NoError(t, srv.Start())
			require.NoError(t, c.WaitConnected(ctx))
			names, _, err := c.Children(ctx, "/election/close-early")
			if err == nil {
				require.Empty(t, names)
			}
		})
	}
}

func TestLeaderOfAnEmptyElection(t *testing.T) {
	srv := zkrtest.Server(t)
	c := newClient(t, []string{srv.Addr()})
	l := newLatch(t, c, "/election/nobody")
	_, err := l.Leader(testCtx(t))
	require.ErrorIs(t, err, ErrNoLeader)
}

// Close waits for the election loop, never for a listener: it returns while a
// listener blocks, with the node gone, and the listener hears the NotifyOnClose that
// follows once it returns. (goleak sees that the listeners' goroutine then ends.)
func TestCloseDoesNotWaitForARunningListener(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	l := newLatch(t, c, "/election/busy-listener", NotifyOnClose())
	release := make(chan struct{})
	heard := make(chan bool, 10)
	l.Listen(func(leads bool) {
		heard <- leads
		if leads {
			<-release
		}
	})
	require.NoError(t, l.Start(ctx))
	require.True(t, <-heard) // the listener is now held
	require.NoError(t, l.Close(ctx), "Close returns while the listener blocks")
	require.Empty(t, children(t, c, "/election/busy-listener"))
	require.Empty(t, heard, "nothing is heard while the listener blocks")
	close(release)
	require.False(t, <-heard, "the end of leadership follows")
}

// Close sends its delete before the latch's loop has wound down (the next leader
// waits for it), yet the closed leader's term, its Context, has ended by then: the
// next leader never starts while it runs.
func TestCloseEndsTheTermBeforeTheNextOneStarts(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	a := newLatch(t, newClient(t, []string{srv.Addr()}), "/election/terms")
	b := newLatch(t, newClient(t, []string{srv.Addr()}), "/election/terms")
	require.NoError(t, a.Start(ctx))
	require.NoError(t, a.Await(ctx))
	term, cancel := a.Context(ctx)
	defer cancel()
	overlapped := make(chan bool, 1)
	b.Listen(func(leads bool) {
		if leads {
			overlapped <- term.Err() == nil || a.IsLeader() || a.FencingToken() != 0
		}
	})
	require.NoError(t, b.Start(ctx))
	require.NoError(t, a.Close(ctx))
	require.NoError(t, b.Await(ctx))
	require.False(t, <-overlapped, "b leads while a's term runs")
	require.ErrorIs(t, context.Cause(term), ErrNotLeader)
}

// While a listener blocks, the latch goes on following the election: a cut
// connection ends the leadership (IsLeader, its Context) at once, not when the
// listener returns, and the listener then hears every change, in order.
func TestLeadershipEndsWhileAListenerBlocks(t *testing.T) {
	srv := zkrtest.Server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	ctx := testCtx(t)
	c := newClient(t, []string{proxy.Addr()}, framework.WithSessionTimeout(4*time.Second))
	l := newLatch(t, c, "/election/blocked-listener")
	release := make(chan struct{})
	heard := make(chan bool, 10)
	l.Listen(func(leads bool) {
		heard <- leads
		if leads {
			<-release
		}
	})
	require.NoError(t, l.Start(ctx))
	require.True(t, <-heard) // the listener is now held
	term, cancel := l.Context(ctx)
	defer cancel()
	require.True(t, l.IsLeader())

	proxy.Cut()
	select {
	case <-term.Done():
		require.ErrorIs(t, context.Cause(term), ErrNotLeader)
	case <-time.After(wait):
		t.Fatal("the leadership's context did not end while a listener blocked")
	}
	require.False(t, l.IsLeader())
	require.Zero(t, l.FencingToken())
	proxy.Restore()
	require.NoError(t, l.Await(ctx), "leads again in the same session, the listener still held")
	require.Empty(t, heard)
	close(release)
	require.False(t, <-heard)
	require.True(t, <-heard)
}

// A listener may close its latch with NotifyOnClose too: Close returns, and the
// listener hears the end of leadership once it has returned.
func TestCloseFromAListenerWithNotifyOnClose(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	l := newLatch(t, c, "/election/one-shot-notify", NotifyOnClose())
	heard := make(chan bool, 10)
	l.Listen(func(leads bool) {
		if leads {
			require.NoError(t, l.Close(ctx))
		}
		heard <- leads
	})
	require.NoError(t, l.Start(ctx))
	require.True(t, <-heard)
	require.False(t, <-heard)
	require.Empty(t, children(t, c, "/election/one-shot-notify"))
}

func TestCloseFromALeadershipListener(t *testing.T) {
	// A one-shot job: lead once, then leave the election from the listener.
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	l := newLatch(t, c, "/election/one-shot")
	closed := make(chan error, 1)
	l.Listen(func(leads bool) {
		if leads {
			closed <- l.Close(ctx)
		}
	})
	require.NoError(t, l.Start(ctx))
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(wait):
		t.Fatal("Close from a listener did not return")
	}
	require.Eventually(t, func() bool {
		names, _, err := c.Children(ctx, "/election/one-shot")
		return err == nil && len(names) == 0
	}, wait, 10*time.Millisecond, "the node goes once the listener returned")
}

func TestClientCloseEndsLeadership(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	c, err := framework.New([]string{srv.Addr()})
	require.NoError(t, err)
	require.NoError(t, c.WaitConnected(ctx))
	l := newLatch(t, c, "/election/client-close")
	ended := make(chan struct{})
	s, err := NewSelector(c, "/election/client-close-sel", func(ctx context.Context, _ Term) error {
		<-ctx.Done()
		close(ended)
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, l.Start(ctx))
	require.NoError(t, s.Start(ctx))
	require.NoError(t, l.Await(ctx))
	require.Eventually(t, s.IsLeader, wait, 5*time.Millisecond)

	require.NoError(t, c.Close())
	require.Eventually(t, func() bool { return !l.IsLeader() }, wait, 5*time.Millisecond, "a closed client's latch does not lead")
	select {
	case <-ended:
	case <-time.After(wait):
		t.Fatal("a closed client's selector still runs lead")
	}
	require.NoError(t, l.Close(ctx))
	require.NoError(t, s.Close(ctx))
}

func TestStartAgainAfterAFailedStart(t *testing.T) {
	for _, kind := range participantKinds {
		t.Run(kind.name, func(t *testing.T) {
			srv, c := beforeServer(t)
			p := kind.make(t, c, "/election/retry-start")
			short, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			require.ErrorIs(t, p.Start(short), context.DeadlineExceeded)
			require.NoError(t, srv.Start())
			ctx := testCtx(t)
			require.NoError(t, p.Start(ctx), "a Start that failed did not join: it may be tried again")
			require.Eventually(t, p.IsLeader, wait, time.Millisecond)
		})
	}
}

// beforeServer is a client of a server that does not answer yet: it was started,
// so its address is known, and stopped. Start it for the client to connect.
func beforeServer(t *testing.T) (*zktest.Server, *framework.Client) {
	t.Helper()
	srv := zktest.NewServer(t)
	srv.Stop()
	// Before its first session an operation waits one connection timeout for a
	// server: long enough for a server started on a busy machine (15 s was not).
	// A connection that a starting server accepts and never answers is given up
	// after the shorter of the connection and session timeouts: 15 s, so that the
	// minute holds several tries (with the default session, one try took it all).
	c, err := framework.New([]string{srv.Addr()}, framework.WithConnectionTimeout(time.Minute),
		framework.WithSessionTimeout(15*time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return srv, c
}

// participant is what Latch and Selector share, for the tests of Start that both
// must pass.
type participant interface {
	Start(ctx context.Context) error
	Close(ctx context.Context) error
	IsLeader() bool
	joining() bool
}

var participantKinds = []struct {
	name string
	make func(t *testing.T, c *framework.Client, path string) participant
}{
	{"latch", func(t *testing.T, c *framework.Client, path string) participant { return newLatch(t, c, path) }},
	{"selector", func(t *testing.T, c *framework.Client, path string) participant {
		s, err := NewSelector(c, path, untilDone)
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close(context.Background()) })
		return s
	}},
}

// joining reports whether Start is under way or done.
func (l *Latch) joining() bool {
	return l.state.State() == lifecycle.Started
}

func (s *Selector) joining() bool {
	return s.state.State() == lifecycle.Started
}

// A listing that finds the latch first, answered just as Close begins, makes no term:
// Close has already deleted our node and the next leader may lead, so no change of
// leadership may follow Close (its listeners would hear true, with NotifyOnClose).
func TestAGrantAsCloseBeginsMakesNoTerm(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	a := newLatch(t, newClient(t, []string{srv.Addr()}), "/election/late", NotifyOnClose())
	closed, awaited := make(chan error, 1), make(chan error, 1)
	var afterClose chan struct{} // the latch's changed once Close has begun
	var once sync.Once
	a.q = lockqueue.New(a.c, a.q.Path(), latchName, func(sorted []string, ours int) (bool, int) {
		holds, watch := lockqueue.Exclusive(sorted, ours)
		if holds {
			once.Do(func() {
				go func() { closed <- a.Close(ctx) }()
				awaited <- a.Await(ctx) // returns once Close has begun
				a.mu.Lock()
				afterClose = a.changed
				a.mu.Unlock()
			})
		}
		return holds, watch
	})
	require.NoError(t, a.Start(ctx))
	require.NoError(t, <-closed)
	require.ErrorIs(t, <-awaited, ErrClosed)
	select {
	case <-afterClose:
		t.Fatal("the latch recorded a change of leadership after Close")
	default:
	}
	require.False(t, a.IsLeader())
}

// A leader whose node another client deletes stops leading as soon as the deletion
// is heard: the next latch, on the same connection, leads only once the old leader
// knows (the referee fails the test if two ever lead). The old leader joins again
// with a new node, so the election comes back to three participants and one leader.
func TestLatchWhoseNodeIsDeletedJoinsAgain(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	c, op := newClient(t, []string{srv.Addr()}), newClient(t, []string{srv.Addr()})
	ref := newReferee(t)
	var latches []*Latch
	for i := range 3 {
		l := newLatch(t, c, "/election/deleted", WithID(fmt.Sprint(i)), NotifyOnClose())
		ref.watch(fmt.Sprint(i), l)
		require.NoError(t, l.Start(ctx))
		latches = append(latches, l)
	}
	require.NoError(t, latches[0].Await(ctx))
	term, cancel := latches[0].Context(ctx)
	defer cancel()
	old := latches[0].Node()

	zkrtest.DeleteHolder(t, op, old)
	require.NoError(t, latches[1].Await(ctx))
	require.False(t, latches[0].IsLeader(), "the old leader knew before the next one led")
	zkrtest.RequireLostToDeletion(t, term, ErrNotLeader)
	require.Eventually(t, func() bool {
		n := latches[0].Node()
		return n != "" && n != old && len(children(t, op, "/election/deleted")) == 3
	}, wait, 10*time.Millisecond, "the old leader joins again with a new node")
	n, which := leaders(latches)
	require.Equal(t, 1, n)
	require.Equal(t, 1, which)
}

// Context of a latch that does not lead has ended when it returns, so the docs'
// `for term.Err() == nil { poll(term, token) }` never polls without leadership.
func TestLatchContextWithoutLeadershipHasEnded(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	leader := newLatch(t, c, "/election/ended")
	require.NoError(t, leader.Start(ctx))
	require.NoError(t, leader.Await(ctx))
	follower := newLatch(t, c, "/election/ended")
	require.NoError(t, follower.Start(ctx))
	for range 1000 {
		term, cancel := follower.Context(ctx)
		require.Error(t, term.Err())
		require.ErrorIs(t, context.Cause(term), ErrNotLeader)
		cancel()
	}
}
