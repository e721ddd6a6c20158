package framework

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/zktest"
)

// afterCreate is a test seam: fn runs after the server applied a create and may
// replace its result with an error, as if the reply had been lost.
func afterCreate(fn func() error) CreateOption {
	return func(o *createOptions) { o.afterCreate = fn }
}

// loseFirstReply fails only the first create, after the server applied it.
func loseFirstReply() CreateOption {
	var calls atomic.Int32
	return afterCreate(func() error {
		if calls.Add(1) == 1 {
			return zk.ErrConnectionClosed
		}
		return nil
	})
}

func children(t *testing.T, c *Client, p string) []string {
	t.Helper()
	names, _, err := c.Children(testCtx(t), p)
	require.NoError(t, err)
	return names
}

func TestProtectedNameIsCuratorsLayout(t *testing.T) {
	srv := sharedServer(t)
	c := newClient(t, []string{srv.Addr()})
	p, err := c.Create(testCtx(t), "/locks/lock-", []byte("id"), Protected(), Ephemeral(), Sequential(), CreatingParents())
	require.NoError(t, err)
	name := baseName(p)
	require.True(t, IsProtectedName(name), name)
	require.Regexp(t, `^_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-lock-\d{10}$`, name)
}

func TestProtectedCreateFindsTheNodeOfALostReply(t *testing.T) {
	srv := sharedServer(t)
	c := newClient(t, []string{srv.Addr()}, WithRetryPolicy(RetryNTimes(3, 0)))
	ctx := testCtx(t)
	p, err := c.Create(ctx, "/locks/lock-", nil, Protected(), Ephemeral(), Sequential(), CreatingParents(), loseFirstReply())
	require.NoError(t, err)
	require.Equal(t, []string{baseName(p)}, children(t, c, "/locks"), "exactly one node, the one returned")
}

func TestUnprotectedRetryLeavesASecondNode(t *testing.T) {
	// Why protection exists: the same lost reply without it leaves an orphan.
	srv := sharedServer(t)
	c := newClient(t, []string{srv.Addr()}, WithRetryPolicy(RetryNTimes(3, 0)))
	_, err := c.Create(testCtx(t), "/locks/lock-", nil, Ephemeral(), Sequential(), CreatingParents(), loseFirstReply())
	require.NoError(t, err)
	require.Len(t, children(t, c, "/locks"), 2)
}

func TestProtectedCreateRefusesANodeOfAnEarlierSession(t *testing.T) {
	t.Parallel()
	// Curator's CURATOR-498: the reply is lost, and by the retry the client runs in a
	// new session while the old one is still alive on the server. The node found has
	// our id but is not ours: it must be deleted, and a new one made.
	srv := zktest.NewServer(t)
	c := newClient(t, []string{srv.Addr()}, WithSessionTimeout(2*time.Second), WithRetryPolicy(RetryNTimes(3, 0)))
	log := listen(c)
	oldSession := c.SessionID()
	ctx := testCtx(t)
	var calls atomic.Int32
	giveUpSession := afterCreate(func() error {
		if calls.Add(1) > 1 {
			return nil
		}
		srv.Stop()
		log.waitFor(t, Suspended, Lost)
		// The restarted server restores the old session, which nobody uses any more.
		require.NoError(t, srv.Start())
		log.waitFor(t, Suspended, Lost, Reconnected)
		return zk.ErrConnectionClosed
	})
	p, err := c.Create(ctx, "/locks/lock-", nil, Protected(), Ephemeral(), Sequential(), CreatingParents(), giveUpSession)
	require.NoError(t, err)
	require.NotEqual(t, oldSession, c.SessionID())

	_, stat, err := c.Exists(ctx, p)
	require.NoError(t, err)
	require.Equal(t, c.SessionID(), stat.EphemeralOwner, "the node returned belongs to the current session")
	require.Eventually(t, func() bool {
		return len(children(t, c, "/locks")) == 1
	}, wait, 20*time.Millisecond, "the old session's node was deleted")
}

func TestFailedProtectedCreateDeletesWhatItMade(t *testing.T) {
	srv := sharedServer(t)
	c := newClient(t, []string{srv.Addr()}, WithNamespace("ns"), WithRetryPolicy(RetryNTimes(0, 0)))
	alwaysLost := afterCreate(func() error { return zk.ErrConnectionClosed })
	_, err := c.Create(testCtx(t), "/locks/lock-", nil, Protected(), Ephemeral(), Sequential(), CreatingParents(), alwaysLost)
	require.ErrorIs(t, err, zk.ErrConnectionClosed)
	require.Eventually(t, func() bool {
		return len(children(t, c, "/locks")) == 0
	}, wait, 20*time.Millisecond, "the node the server made was found and deleted")
}

// A reply that never comes in time: Create waits for it cleanupTimeout at most, then
// returns, and the node is deleted in the background once the reply comes.
func TestCancelledCreateLeavesNoNode(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t)
	c := newClient(t, []string{srv.Addr()})
	ctx, cancel := context.WithCancel(context.Background())
	returned := make(chan struct{})
	// Cancel while the request is in flight; the reply arrives only after Create has
	// given up on it.
	inFlight := afterCreate(func() error {
		cancel()
		<-returned
		return nil
	})
	for _, protected := range []bool{false, true} {
		opts := []CreateOption{Ephemeral(), Sequential(), CreatingParents(), inFlight}
		if protected {
			opts = append(opts, Protected())
		}
		_, err := c.Create(ctx, "/locks/lock-", nil, opts...)
		require.ErrorIs(t, err, context.Canceled)
		close(returned)
		require.Eventually(t, func() bool {
			return len(children(t, c, "/locks")) == 0
		}, wait, 20*time.Millisecond, "the node created after the cancel was deleted")
		ctx, cancel = context.WithCancel(context.Background())
		returned = make(chan struct{})
	}
	cancel()
}

// slowReply is how long after the cancel the reply of a create cancelled in flight
// comes, in the tests below, unless the test has looked already: a slow server's. A
// Create that returned at once, leaving the delete to the background, is caught with
// its node still there; one that waits for the reply passes however long it takes.
const slowReply = 100 * time.Millisecond

// What a cancelled Create promises is true when it returns: when its ctx ends while
// the request is in flight, it waits for the answer and deletes the node made before
// it returns ctx's error. Another client looks right after it returns, without
// waiting, and finds nothing.
func TestACancelledCreateIsGoneWhenItReturns(t *testing.T) {
	srv := sharedServer(t)
	c := newClient(t, []string{srv.Addr()})
	other := newClient(t, []string{srv.Addr()})

	// inFlight cancels the create's ctx once the server has applied it; the reply
	// comes slowReply later, or as soon as the test has looked.
	inFlight := func(cancel context.CancelFunc, looked <-chan struct{}) CreateOption {
		return afterCreate(func() error {
			cancel()
			slow := time.NewTimer(slowReply)
			defer slow.Stop()
			select {
			case <-looked:
			case <-slow.C:
			}
			return nil
		})
	}
	for i, tt := range []struct {
		name string
		opts []CreateOption
	}{
		{"plain", nil},
		{"ephemeral sequential", []CreateOption{Ephemeral(), Sequential()}},
		{"protected ephemeral sequential", []CreateOption{Protected(), Ephemeral(), Sequential()}},
		{"protected", []CreateOption{Protected()}},
		{"OrSetData of a new node", []CreateOption{OrSetData()}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			parent := fmt.Sprintf("/cancelled-%d", i)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			looked := make(chan struct{})
			opts := append([]CreateOption{CreatingParents(), inFlight(cancel, looked)}, tt.opts...)
			_, err := c.Create(ctx, parent+"/node-", []byte("x"), opts...)
			left := children(t, other, parent)
			close(looked)
			require.ErrorIs(t, err, context.Canceled)
			require.Empty(t, left, "the node made is gone when Create returns")
		})
	}

	t.Run("OrSetData of an existing node", func(t *testing.T) {
		// Not the call's node: it stays, with the data written.
		_, err := other.Create(testCtx(t), "/cancelled-set", []byte("old"))
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		looked := make(chan struct{})
		_, err = c.Create(ctx, "/cancelled-set", []byte("new"), OrSetData(), inFlight(cancel, looked))
		data, _, getErr := other.Get(testCtx(t), "/cancelled-set")
		close(looked)
		require.ErrorIs(t, err, context.Canceled)
		require.NoError(t, getErr)
		require.Equal(t, "new", string(data))
	})

	t.Run("protected, its reply lost, then cancelled", func(t *testing.T) {
		// The attempt fails on a connection error, after the server made the node;
		// ctx ends before the retry. Create finds the node by its protection id, and
		// deletes it, before it returns.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		c := newClient(t, []string{srv.Addr()}, WithRetryPolicy(cancelInPause{cancel}))
		lost := afterCreate(func() error { return zk.ErrConnectionClosed })
		_, err := c.Create(ctx, "/cancelled-lost/node-", nil, CreatingParents(), Protected(), Ephemeral(), Sequential(), lost)
		left := children(t, other, "/cancelled-lost")
		require.ErrorIs(t, err, context.Canceled)
		require.ErrorContains(t, err, "last error: "+zk.ErrConnectionClosed.Error())
		require.Empty(t, left, "the node made is gone when Create returns")
	})

	t.Run("Close ends the wait", func(t *testing.T) {
		// The reply comes only once Close has begun: Create and Close both return.
		c := newClient(t, []string{srv.Addr()})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		closing := c.ForRecipes().Context()
		untilClose := afterCreate(func() error {
			cancel()
			<-closing.Done()
			return nil
		})
		res := make(chan error, 1)
		go func() {
			_, err := c.Create(ctx, "/cancelled-close/node-", nil, CreatingParents(), Ephemeral(), Sequential(), untilClose)
			res <- err
		}()
		<-ctx.Done()
		require.NoError(t, c.Close())
		require.ErrorIs(t, <-res, context.Canceled)
		require.Empty(t, children(t, other, "/cancelled-close"), "the session's node went with it")
	})
}

// cancelInPause is a retry policy whose pauses cancel the operation's ctx: the ctx
// ends after an attempt failed on a connection error, before its retry.
type cancelInPause struct{ cancel context.CancelFunc }

func (p cancelInPause) NewBackOff() backoff.BackOff { return p }
func (p cancelInPause) NextBackOff() time.Duration  { p.cancel(); return time.Hour }
func (p cancelInPause) Reset()                      {}

func TestTTLNodes(t *testing.T) {
	ctx := testCtx(t)
	plain := sharedServer(t)
	c := newClient(t, []string{plain.Addr()})
	_, err := c.Create(ctx, "/ttl", nil, TTL(time.Second))
	require.ErrorIs(t, err, ErrTTLDisabled, "a server without extended types refuses TTL nodes")

	srv := zktest.NewServer(t, zktest.WithConfig("extendedTypesEnabled=true"))
	c = newClient(t, []string{srv.Addr()})
	p, err := c.Create(ctx, "/ttl/node-", []byte("x"), TTL(time.Hour), Sequential(), CreatingParents())
	require.NoError(t, err)
	require.Regexp(t, `^/ttl/node-\d{10}$`, p)
	ok, _, err := c.Exists(ctx, p)
	require.NoError(t, err)
	require.True(t, ok)

	for _, bad := range [][]CreateOption{{TTL(time.Hour), Ephemeral()}, {TTL(-time.Second)}, {TTL(time.Microsecond)}, {TTL(time.Hour), Container()}} {
		_, err := c.Create(ctx, "/ttl/bad", nil, bad...)
		require.ErrorIs(t, err, ErrInvalidCreate)
	}
}
