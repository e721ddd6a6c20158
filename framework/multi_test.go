package framework

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/zktest"
)

func TestMultiAppliesEveryOpAndSaysWhatEachDid(t *testing.T) {
	srv := sharedServer(t)
	c := newClient(t, []string{srv.Addr()}, WithNamespace("app"))
	ctx := testCtx(t)
	_, err := c.Create(ctx, "/old", []byte("x"))
	require.NoError(t, err)
	_, err = c.Create(ctx, "/config", []byte("v1"))
	require.NoError(t, err)

	res, err := c.Multi(ctx,
		CheckOp("/config", 0),
		CreateOp("/jobs", nil),
		CreateOp("/jobs/job-", []byte("j"), Sequential()),
		SetOp("/config", []byte("v2"), 0),
		DeleteOp("/old", -1),
	)
	require.NoError(t, err)
	require.Len(t, res, 5)
	require.Equal(t, "/config", res[0].Path)
	require.Equal(t, "/jobs", res[1].Path)
	require.Regexp(t, `^/jobs/job-\d{10}$`, res[2].Path, "the sequence, without the namespace")
	require.NotNil(t, res[3].Stat)
	require.EqualValues(t, 1, res[3].Stat.Version)
	require.Nil(t, res[4].Stat)

	data, _, err := c.Get(ctx, "/config")
	require.NoError(t, err)
	require.Equal(t, "v2", string(data))
	ok, _, err := c.Exists(ctx, "/old")
	require.NoError(t, err)
	require.False(t, ok)
	raw := newClient(t, []string{srv.Addr()})
	ok, _, err = raw.Exists(ctx, "/app"+res[2].Path)
	require.NoError(t, err)
	require.True(t, ok, "made under the namespace")
}

func TestMultiRefusedAppliesNothingAndNamesTheOp(t *testing.T) {
	srv := sharedServer(t)
	c := newClient(t, []string{srv.Addr()})
	ctx := testCtx(t)
	_, err := c.Create(ctx, "/config", []byte("v1"))
	require.NoError(t, err)
	_, err = c.Create(ctx, "/busy", nil)
	require.NoError(t, err)
	_, err = c.Create(ctx, "/busy/child", nil)
	require.NoError(t, err)

	for _, tc := range []struct {
		name  string
		ops   []Op
		index int
		err   error
	}{
		{"a check of a moved version", []Op{CreateOp("/new", nil), CheckOp("/config", 7)}, 1, zk.ErrBadVersion},
		{"a set of a missing node", []Op{CreateOp("/new", nil), SetOp("/missing", nil, -1)}, 1, zk.ErrNoNode},
		{"a create of an existing node", []Op{CreateOp("/new", nil), CreateOp("/config", nil)}, 1, zk.ErrNodeExists},
		{"a delete of a node with children", []Op{CreateOp("/new", nil), DeleteOp("/busy", -1)}, 1, zk.ErrNotEmpty},
		{"a versioned set", []Op{SetOp("/config", []byte("v2"), 3), CreateOp("/new", nil)}, 0, zk.ErrBadVersion},
		{"a child of a missing parent", []Op{CreateOp("/new", nil), CreateOp("/nowhere/x", nil)}, 1, zk.ErrNoNode},
	} {
		res, err := c.Multi(ctx, tc.ops...)
		require.Nil(t, res, tc.name)
		require.ErrorIs(t, err, tc.err, tc.name)
		var me *MultiError
		require.True(t, errors.As(err, &me), tc.name)
		require.Equal(t, tc.index, me.Index, tc.name)
		require.Equal(t, tc.ops[tc.index].String(), me.Op.String(), tc.name)
		require.False(t, me.AfterRetry, tc.name)
		require.ErrorContains(t, err, tc.ops[tc.index].String(), tc.name)

		ok, _, err := c.Exists(ctx, "/new")
		require.NoError(t, err)
		require.False(t, ok, "%s: all or nothing", tc.name)
		data, _, err := c.Get(ctx, "/config")
		require.NoError(t, err)
		require.Equal(t, "v1", string(data), tc.name)
	}
}

func TestMultiRefusesBadInputBeforeSending(t *testing.T) {
	srv := sharedServer(t)
	c := newClient(t, []string{srv.Addr()}, WithMaxDataSize(100))
	ctx := testCtx(t)
	valid := CreateOp("/made", nil)
	for name, tc := range map[string]struct {
		op   Op
		want error
	}{
		"zero Op":                    {Op{}, ErrInvalidOp},
		"relative path":              {CreateOp("made", nil), ErrInvalidPath},
		"trailing slash":             {SetOp("/a/", nil, -1), ErrInvalidPath},
		"reserved":                   {DeleteOp("/zookeeper/quota", -1), ErrInvalidPath},
		"root":                       {DeleteOp("/", -1), ErrInvalidOp},
		"container":                  {CreateOp("/c", nil, Container()), ErrInvalidOp},
		"protected":                  {CreateOp("/c", nil, Protected(), Ephemeral(), Sequential()), ErrInvalidOp},
		"creating parents":           {CreateOp("/c/d", nil, CreatingParents()), ErrInvalidOp},
		"creating parent containers": {CreateOp("/c/d", nil, CreatingParentContainers()), ErrInvalidOp},
		"nil option":                 {CreateOp("/c", nil, nil), ErrInvalidOp},
		"too much data":              {SetOp("/made", make([]byte, 100), -1), ErrDataTooLarge},
	} {
		_, err := c.Multi(ctx, valid, tc.op)
		require.ErrorIs(t, err, tc.want, name)
		require.NotErrorAs(t, err, new(*MultiError), "%s: refused before sending", name)
	}
	ok, _, err := c.Exists(ctx, "/made")
	require.NoError(t, err)
	require.False(t, ok, "nothing was sent")

	res, err := c.Multi(ctx)
	require.NoError(t, err)
	require.Empty(t, res, "no ops, no request")
	_, err = c.Multi(ctx, CheckOp("/zookeeper", -1))
	require.NoError(t, err, "checking ZooKeeper's own node is a read")
}

func TestMultiWithACLsAndCredentials(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t)
	owner := newClient(t, []string{srv.Addr()},
		WithAuth("digest", []byte("alice:secret")), WithACL(FixedACL(zk.AuthACL(zk.PermAll)...)))
	stranger := newClient(t, []string{srv.Addr()})
	ctx := testCtx(t)

	_, err := owner.Multi(ctx, CreateOp("/private", []byte("p")), CreateOp("/private/a", nil))
	require.NoError(t, err)
	acl, _, err := owner.Conn().GetACL("/private/a")
	require.NoError(t, err)
	require.Equal(t, "digest", acl[0].Scheme, "the provider's ACL")

	_, err = stranger.Multi(ctx, SetOp("/private", []byte("q"), -1))
	require.ErrorIs(t, err, zk.ErrNoAuth)
	require.ErrorContains(t, err, "refused by an ACL")
	var me *MultiError
	require.ErrorAs(t, err, &me)
	require.Equal(t, 0, me.Index)
}

func TestMultiWaitsOutAServerRestart(t *testing.T) {
	srv := zktest.NewServer(t)
	c := newClient(t, []string{srv.Addr()}, WithSessionTimeout(20*time.Second))
	ctx := testCtx(t)
	log := listen(c)
	srv.Stop()
	log.waitFor(t, Suspended)
	done := make(chan error, 1)
	go func() {
		_, err := c.Multi(ctx, CreateOp("/a", nil), CreateOp("/a/b", nil))
		done <- err
	}()
	require.NoError(t, srv.Start())
	require.NoError(t, <-done)
	require.Equal(t, []string{"b"}, children(t, c, "/a"))
}

func TestMultiStopsWithItsContextAndItsClient(t *testing.T) {
	srv := sharedServer(t)
	c := newClient(t, []string{srv.Addr()})
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.Multi(cancelled, CreateOp("/a", nil))
	require.ErrorIs(t, err, context.Canceled)
	ok, _, err := c.Exists(testCtx(t), "/a")
	require.NoError(t, err)
	require.False(t, ok, "an ended context sends nothing")

	require.NoError(t, c.Close())
	_, err = c.Multi(context.Background(), CreateOp("/a", nil))
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, c.Sync(context.Background(), "/"), ErrClosed)
}

func TestSyncMakesAFollowerCatchUp(t *testing.T) {
	t.Parallel()
	ens := zktest.NewEnsemble(t, 3)
	leader := ens.Leader()
	follower := (leader + 1) % 3
	writer := newClient(t, []string{ens.Addr(leader)})
	reader := newClient(t, []string{ens.Addr(follower)})
	ctx := testCtx(t)
	_, err := writer.Create(ctx, "/n", nil)
	require.NoError(t, err)
	for i := range 50 {
		stat, err := writer.Set(ctx, "/n", nil, -1)
		require.NoError(t, err)
		require.NoError(t, reader.Sync(ctx, "/n"))
		_, got, err := reader.Get(ctx, "/n")
		require.NoError(t, err)
		require.Equal(t, stat.Version, got.Version, "read %d after Sync sees the write before it", i)
	}
	require.NoError(t, reader.Sync(ctx, "/missing"), "a path need not exist")
	require.ErrorIs(t, reader.Sync(ctx, "relative"), ErrInvalidPath)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, reader.Sync(cancelled, "/n"), context.Canceled)
}
