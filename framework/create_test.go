package framework

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

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
	srv := zktest.NewServer(t)
	c := newClient(t, []string{srv.Addr()})
	p, err := c.Create(testCtx(t), "/locks/lock-", []byte("id"), Protected(), Ephemeral(), Sequential(), CreatingParents())
	require.NoError(t, err)
	name := baseName(p)
	require.True(t, IsProtectedName(name), name)
	require.Regexp(t, `^_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-lock-\d{10}$`, name)
}

func TestProtectedCreateFindsTheNodeOfALostReply(t *testing.T) {
	srv := zktest.NewServer(t)
	c := newClient(t, []string{srv.Addr()}, WithRetryPolicy(RetryNTimes(3, 0)))
	ctx := testCtx(t)
	p, err := c.Create(ctx, "/locks/lock-", nil, Protected(), Ephemeral(), Sequential(), CreatingParents(), loseFirstReply())
	require.NoError(t, err)
	require.Equal(t, []string{baseName(p)}, children(t, c, "/locks"), "exactly one node, the one returned")
}

func TestUnprotectedRetryLeavesASecondNode(t *testing.T) {
	// Why protection exists: the same lost reply without it leaves an orphan.
	srv := zktest.NewServer(t)
	c := newClient(t, []string{srv.Addr()}, WithRetryPolicy(RetryNTimes(3, 0)))
	_, err := c.Create(testCtx(t), "/locks/lock-", nil, Ephemeral(), Sequential(), CreatingParents(), loseFirstReply())
	require.NoError(t, err)
	require.Len(t, children(t, c, "/locks"), 2)
}

func TestProtectedCreateRefusesANodeOfAnEarlierSession(t *testing.T) {
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
	srv := zktest.NewServer(t)
	c := newClient(t, []string{srv.Addr()}, WithNamespace("ns"), WithRetryPolicy(RetryNTimes(0, 0)))
	alwaysLost := afterCreate(func() error { return zk.ErrConnectionClosed })
	_, err := c.Create(testCtx(t), "/locks/lock-", nil, Protected(), Ephemeral(), Sequential(), CreatingParents(), alwaysLost)
	require.ErrorIs(t, err, zk.ErrConnectionClosed)
	require.Eventually(t, func() bool {
		return len(children(t, c, "/locks")) == 0
	}, wait, 20*time.Millisecond, "the node the server made was found and deleted")
}

func TestCancelledCreateLeavesNoNode(t *testing.T) {
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

func TestTTLNodes(t *testing.T) {
	ctx := testCtx(t)
	plain := zktest.NewServer(t)
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
