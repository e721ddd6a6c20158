package framework

import (
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/zktest"
)

func TestGetACLAndSetACL(t *testing.T) {
	srv := sharedServer(t)
	c := newClient(t, []string{srv.Addr()}, WithNamespace("app"), WithAuth("digest", []byte("alice:secret")))
	ctx := testCtx(t)

	private := append(zk.DigestACL(zk.PermAll, "alice", "secret"), zk.WorldACL(zk.PermRead)...)
	_, err := c.Create(ctx, "/node", []byte("x"), WithNodeACL(private...))
	require.NoError(t, err)
	acl, stat, err := c.GetACL(ctx, "/node")
	require.NoError(t, err)
	require.ElementsMatch(t, private, acl, "the node's own ACL, not the provider's")
	require.Equal(t, int32(0), stat.Aversion)

	// The namespace applies: the server's node is /app/node.
	raw, _, err := c.Namespaced("").GetACL(ctx, "/app/node")
	require.NoError(t, err)
	require.ElementsMatch(t, private, raw)

	open := zk.WorldACL(zk.PermAll)
	stat, err = c.SetACL(ctx, "/node", open, 0)
	require.NoError(t, err)
	require.Equal(t, int32(1), stat.Aversion)

	_, err = c.SetACL(ctx, "/node", private, 0)
	require.ErrorIs(t, err, zk.ErrBadVersion, "someone changed the ACL since version 0")
	require.ErrorContains(t, err, "/node")
	acl, _, err = c.GetACL(ctx, "/node")
	require.NoError(t, err)
	require.Equal(t, open, acl, "a refused SetACL changes nothing")

	_, err = c.SetACL(ctx, "/node", nil, -1)
	require.ErrorIs(t, err, ErrInvalidOption)
	_, _, err = c.GetACL(ctx, "/missing")
	require.ErrorIs(t, err, zk.ErrNoNode)
	_, err = c.SetACL(ctx, "relative", open, -1)
	require.ErrorIs(t, err, ErrInvalidPath)

	// Another client without the credentials may read but not change a private ACL.
	_, err = c.SetACL(ctx, "/node", private, -1)
	require.NoError(t, err)
	stranger := newClient(t, []string{srv.Addr()}, WithNamespace("app"))
	_, err = stranger.SetACL(ctx, "/node", open, -1)
	require.ErrorIs(t, err, zk.ErrNoAuth)
}

func TestCreateWithNodeACLRefusesAnEmptyACL(t *testing.T) {
	c, err := New([]string{"127.0.0.1:1"})
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Create(testCtx(t), "/a", nil, WithNodeACL())
	require.ErrorIs(t, err, ErrInvalidCreate)
	require.ErrorContains(t, err, "empty node ACL")
	_, err = c.Create(testCtx(t), "/a", nil, WithNodePerms(0))
	require.ErrorIs(t, err, ErrInvalidCreate)
}

// WithNodePerms keeps each id of the node's ACL with only the permissions asked for,
// and leaves out the ids left with none.
func TestWithNodePermsCutsTheACL(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	owner := zk.DigestACL(zk.PermAll, "alice", "secret")
	c := newClient(t, []string{srv.Addr()}, WithAuth("digest", []byte("alice:secret")),
		WithACL(FixedACL(append(owner, zk.WorldACL(zk.PermCreate)...)...)))
	_, err := c.Create(ctx, "/frozen", []byte("x"), WithNodePerms(zk.PermRead))
	require.NoError(t, err)
	acl, _, err := c.GetACL(ctx, "/frozen")
	require.NoError(t, err)
	// The owner keeps READ; world had no READ, and is left out. (The server hides
	// the digest from a reader without ADMIN.)
	readOnly := func(acl []zk.ACL) {
		t.Helper()
		require.Len(t, acl, 1, "%v", acl)
		require.Equal(t, "digest", acl[0].Scheme)
		require.True(t, strings.HasPrefix(acl[0].ID, "alice:"), acl[0].ID)
		require.Equal(t, int32(zk.PermRead), acl[0].Perms)
	}
	readOnly(acl)
	_, err = c.Set(ctx, "/frozen", []byte("y"), -1)
	require.ErrorIs(t, err, zk.ErrNoAuth)
	_, err = c.SetACL(ctx, "/frozen", owner, -1)
	require.ErrorIs(t, err, zk.ErrNoAuth)
	require.NoError(t, c.Delete(ctx, "/frozen", -1), "the root's ACL grants DELETE")

	// In a transaction too.
	_, err = c.Multi(ctx, CreateOp("/frozen", nil, WithNodePerms(zk.PermRead)))
	require.NoError(t, err)
	acl, _, err = c.GetACL(ctx, "/frozen")
	require.NoError(t, err)
	readOnly(acl)
}
