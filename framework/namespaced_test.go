package framework

import (
	"context"
	"fmt"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
)

func TestNamespacedSharesTheSession(t *testing.T) {
	srv := sharedServer(t)
	c := newClient(t, []string{srv.Addr()}, WithNamespace("app"))
	ctx := testCtx(t)

	v := c.Namespaced("other/sub")
	require.Equal(t, "other/sub", v.Namespace())
	require.Equal(t, c.SessionID(), v.SessionID())
	require.Equal(t, c.ForRecipes(), v.ForRecipes(), "the session's plumbing")
	require.Contains(t, fmt.Sprint(v), "in namespace other/sub: Connected")

	events := make(chan zk.Event, 10)
	stop := v.OnWatchEvent(func(ev zk.Event) { events <- ev })
	defer stop()
	_, _, w, err := v.ExistsW(ctx, "/e")
	require.NoError(t, err)
	p, err := v.Create(ctx, "/e", []byte("x"), Ephemeral())
	require.NoError(t, err)
	require.Equal(t, "/e", p)
	<-w
	require.Equal(t, "/e", (<-events).Path, "the view's own namespace is stripped")

	root := c.Namespaced("")
	_, stat, err := root.Get(ctx, "/other/sub/e")
	require.NoError(t, err)
	require.Equal(t, c.SessionID(), stat.EphemeralOwner, "made in the shared session")
	ok, _, err := c.Exists(ctx, "/e")
	require.NoError(t, err)
	require.False(t, ok, "the client's own namespace is untouched")

	require.NoError(t, v.Close())
	_, _, err = v.Get(ctx, "/e")
	require.ErrorIs(t, err, ErrClosed, "a closed view")
	require.True(t, c.State().IsConnected(), "closing a view leaves the session")
	require.NoError(t, v.ForRecipes().Context().Err(), "and its plumbing")
	_, _, err = root.Get(ctx, "/other/sub/e")
	require.NoError(t, err, "its ephemeral node with it")

	bad := c.Namespaced("/slash")
	_, err = bad.Create(ctx, "/x", nil)
	require.ErrorIs(t, err, ErrInvalidNamespace)
	require.ErrorContains(t, err, `"/slash"`)
	require.ErrorIs(t, c.Namespaced("zookeeper").DeleteAll(ctx, "/x"), ErrInvalidNamespace)

	require.NoError(t, c.Close())
	late := c.Namespaced("late")
	_, _, err = late.Get(ctx, "/x")
	require.ErrorIs(t, err, ErrClosed, "a view of a closed client")
	_, _, err = root.Get(ctx, "/x")
	require.ErrorIs(t, err, ErrClosed, "closing the client closes its views")
	require.ErrorIs(t, context.Cause(v.ForRecipes().Context()), ErrClosed, "and ends their plumbing's context")
}
