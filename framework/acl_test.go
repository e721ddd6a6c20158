package framework

import (
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/zktest"
)

func TestGetACLAndSetACL(t *testing.T) {
	srv := zktest.NewServer(t)
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
}
