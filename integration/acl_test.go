package integration

import (
	"context"
	"errors"
	"path"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/election"
	"github.com/zkrecipes/zkrecipes/recipes/multilock"
	"github.com/zkrecipes/zkrecipes/recipes/mutex"
	"github.com/zkrecipes/zkrecipes/recipes/rwlock"
	"github.com/zkrecipes/zkrecipes/recipes/semaphore"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// holdFunc takes a recipe at path p with client c, waiting as long as ctx allows,
// and returns how to let it go.
type holdFunc func(ctx context.Context, c *framework.Client, p string) (release func(context.Context) error, err error)

// aclRecipes is every recipe, each taken the way a user takes it.
var aclRecipes = []struct {
	name string
	hold holdFunc
}{
	{"mutex", func(ctx context.Context, c *framework.Client, p string) (func(context.Context) error, error) {
		m, err := mutex.New(c, p)
		if err != nil {
			return nil, err
		}
		return m.Release, m.Acquire(ctx)
	}},
	{"rwlock-read", func(ctx context.Context, c *framework.Client, p string) (func(context.Context) error, error) {
		l, err := rwlock.New(c, p)
		if err != nil {
			return nil, err
		}
		return l.ReadLock().Release, l.ReadLock().Acquire(ctx)
	}},
	{"rwlock-write", func(ctx context.Context, c *framework.Client, p string) (func(context.Context) error, error) {
		l, err := rwlock.New(c, p)
		if err != nil {
			return nil, err
		}
		return l.WriteLock().Release, l.WriteLock().Acquire(ctx)
	}},
	{"semaphore", func(ctx context.Context, c *framework.Client, p string) (func(context.Context) error, error) {
		s, err := semaphore.New(c, p, 1)
		if err != nil {
			return nil, err
		}
		leases, err := s.Acquire(ctx, 1)
		if err != nil {
			return nil, err
		}
		return leases[0].Release, nil
	}},
	{"semaphore-try", func(ctx context.Context, c *framework.Client, p string) (func(context.Context) error, error) {
		s, err := semaphore.New(c, p, 2)
		if err != nil {
			return nil, err
		}
		leases, err := s.TryAcquire(ctx, 1)
		if err != nil {
			return nil, err
		}
		return leases[0].Release, nil
	}},
	{"semaphore-mutex", func(ctx context.Context, c *framework.Client, p string) (func(context.Context) error, error) {
		m, err := semaphore.NewMutex(c, p)
		if err != nil {
			return nil, err
		}
		return m.Release, m.Acquire(ctx)
	}},
	{"multilock", func(ctx context.Context, c *framework.Client, p string) (func(context.Context) error, error) {
		m, err := multilock.NewMutexes(c, []string{p + "/a", p + "/b"})
		if err != nil {
			return nil, err
		}
		return m.Release, m.Acquire(ctx)
	}},
	{"latch", func(ctx context.Context, c *framework.Client, p string) (func(context.Context) error, error) {
		l, err := election.NewLatch(c, p)
		if err != nil {
			return nil, err
		}
		if err := l.Start(ctx); err != nil {
			return nil, err
		}
		return l.Close, l.Await(ctx)
	}},
	{"selector", func(ctx context.Context, c *framework.Client, p string) (func(context.Context) error, error) {
		leading := make(chan struct{})
		s, err := election.NewSelector(c, p, func(ctx context.Context, _ election.Term) error {
			close(leading)
			<-ctx.Done()
			return nil
		})
		if err != nil {
			return nil, err
		}
		if err := s.Start(ctx); err != nil {
			return nil, err
		}
		select {
		case <-leading:
			return s.Close, nil
		case <-ctx.Done():
			return s.Close, ctx.Err()
		}
	}},
}

// TestACLsEndToEnd is Curator's TestLockACLs and TestLeaderAcls for every recipe,
// with digest credentials and a creator-only ACL: the nodes a recipe creates, its
// container parents and the namespace included, carry the provider's ACL; a client
// without the credentials, or with others, can neither enter the queue nor delete
// the holder's node, and is told so at once; a second client with the same
// credentials uses the recipe as usual.
func TestACLsEndToEnd(t *testing.T) {
	srv := zktest.NewServer(t)
	const ns = "acl"
	creatorOnly := framework.WithACL(framework.FixedACL(framework.AuthACL(framework.PermAll)...))
	alice := framework.WithAuth("digest", []byte("alice:secret"))
	// The server stores a creator ACL as the creator's own identity.
	want := framework.DigestACL(framework.PermAll, "alice", "secret")

	for _, r := range aclRecipes {
		t.Run(r.name, func(t *testing.T) {
			ctx := testCtx(t)
			p := "/" + r.name + "/lock"
			owner := newClient(t, []string{srv.Addr()}, framework.WithNamespace(ns), alice, creatorOnly)
			release, err := r.hold(ctx, owner, p)
			require.NoError(t, err)

			// Every node the recipe made carries the provider's ACL.
			before := aclTree(t, owner.Conn(), "/"+ns)
			require.Contains(t, before, "/"+ns+"/"+r.name, "a container parent")
			for node, n := range before {
				require.Equal(t, want, n.acl, "the ACL of %s", node)
			}
			ours := ephemerals(before)
			require.NotEmpty(t, ours, "the holder's nodes")

			for _, who := range []struct {
				name string
				opts []framework.Option
			}{
				{"anonymous", nil},
				{"mallory", []framework.Option{framework.WithAuth("digest", []byte("mallory:other")), creatorOnly}},
			} {
				retries := &countingPolicy{}
				opts := append([]framework.Option{framework.WithNamespace(ns), framework.WithRetryPolicy(retries)}, who.opts...)
				intruder := newClient(t, []string{srv.Addr()}, opts...)

				for _, node := range ours {
					err := intruder.Delete(ctx, node[len(ns)+1:], -1)
					require.ErrorIs(t, err, framework.ErrNoAuth, "%s deletes %s", who.name, node)
				}
				_, err := r.hold(ctx, intruder, p)
				require.ErrorIs(t, err, framework.ErrNoAuth, "%s enters the queue", who.name)
				require.NoError(t, ctx.Err(), "refused at once, not after a wait")
				require.Contains(t, err.Error(), p, "the error names the recipe")
				require.Contains(t, err.Error(), "refused by an ACL", "the error says why")
				require.Zero(t, retries.count.Load(), "an ACL refusal is not retried")
				require.NoError(t, intruder.Close())
			}
			after := aclTree(t, owner.Conn(), "/"+ns)
			require.Equal(t, ours, ephemerals(after), "the holder's nodes are intact, and the intruders left none")

			// A second client with the same credentials queues and takes over.
			friend := newClient(t, []string{srv.Addr()}, framework.WithNamespace(ns), alice, creatorOnly)
			taken := make(chan error, 1)
			var releaseFriend func(context.Context) error
			go func() {
				var err error
				releaseFriend, err = r.hold(ctx, friend, p)
				taken <- err
			}()
			require.NoError(t, release(ctx))
			require.NoError(t, <-taken)
			require.NoError(t, releaseFriend(ctx))
			require.Empty(t, ephemerals(aclTree(t, owner.Conn(), "/"+ns)), "nothing left behind")
		})
	}
}

type aclNode struct {
	acl       []framework.ACL
	ephemeral bool
}

// aclTree lists root and every node below it, with its ACL, through a raw
// connection (server paths, namespace included).
func aclTree(t *testing.T, conn *zk.Conn, root string) map[string]aclNode {
	t.Helper()
	tree := map[string]aclNode{}
	var walk func(p string)
	walk = func(p string) {
		acl, stat, err := conn.GetACL(p)
		if errors.Is(err, framework.ErrNoNode) {
			return // went while we walked
		}
		require.NoError(t, err, p)
		tree[p] = aclNode{acl: acl, ephemeral: stat.EphemeralOwner != 0}
		names, _, err := conn.Children(p)
		if errors.Is(err, framework.ErrNoNode) {
			return
		}
		require.NoError(t, err, p)
		for _, name := range names {
			walk(path.Join(p, name))
		}
	}
	walk(root)
	return tree
}

// ephemerals are the participants' nodes of a tree, sorted.
func ephemerals(tree map[string]aclNode) []string {
	var nodes []string
	for p, n := range tree {
		if n.ephemeral {
			nodes = append(nodes, p)
		}
	}
	slices.Sort(nodes)
	return nodes
}

// countingPolicy counts the retries asked of it, and grants none: a client with it
// fails on its first retryable error instead of retrying.
type countingPolicy struct{ count atomic.Int32 }

func (p *countingPolicy) NewBackOff() backoff.BackOff { return (*countingBackOff)(p) }

type countingBackOff countingPolicy

func (b *countingBackOff) NextBackOff() time.Duration {
	b.count.Add(1)
	return backoff.Stop
}

func (b *countingBackOff) Reset() {}
