package framework

import (
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
)

// between is a test seam: fn runs before each set, and each create after the first,
// of a create OrSetData; its argument counts the calls from 1, so odd calls come
// before a set and even ones before a create.
func between(fn func(n int)) CreateOption {
	n := 0
	return func(o *createOptions) { o.between = func() { n++; fn(n) } }
}

func TestCreateOrSetData(t *testing.T) {
	srv := sharedServer(t)
	c := newClient(t, []string{srv.Addr()}, WithNamespace("app"))
	other := newClient(t, []string{srv.Addr()}, WithNamespace("app"))
	ctx := testCtx(t)

	p, err := c.Create(ctx, "/config", []byte("one"), OrSetData())
	require.NoError(t, err)
	require.Equal(t, "/config", p, "created")

	_, err = c.Create(ctx, "/config", []byte("two"))
	require.ErrorIs(t, err, zk.ErrNodeExists, "without OrSetData")

	p, err = c.Create(ctx, "/config", []byte("two"), OrSetData())
	require.NoError(t, err)
	require.Equal(t, "/config", p)
	data, stat, err := other.Get(ctx, "/config")
	require.NoError(t, err)
	require.Equal(t, "two", string(data), "overwritten")
	require.Equal(t, int32(1), stat.Version)

	// Deleted between the create that found it and the set: created again.
	p, err = c.Create(ctx, "/config", []byte("three"), OrSetData(), between(func(n int) {
		if n == 1 {
			require.NoError(t, other.Delete(ctx, "/config", -1))
		}
	}))
	require.NoError(t, err)
	require.Equal(t, "/config", p)
	data, stat, err = other.Get(ctx, "/config")
	require.NoError(t, err)
	require.Equal(t, "three", string(data))
	require.Equal(t, int32(0), stat.Version, "a new node")

	// Others who keep deleting it before our set and creating it before our create
	// exhaust the rounds: a clear error, their node untouched.
	rounds := 0
	_, err = c.Create(ctx, "/config", []byte("four"), OrSetData(), between(func(n int) {
		if n%2 == 1 {
			rounds++
			require.NoError(t, other.Delete(ctx, "/config", -1))
		} else {
			_, err := other.Create(ctx, "/config", []byte("theirs"))
			require.NoError(t, err)
		}
	}))
	require.ErrorIs(t, err, zk.ErrNodeExists)
	require.ErrorContains(t, err, "created and deleted by others")
	require.Equal(t, orSetRounds, rounds)
	data, _, err = other.Get(ctx, "/config")
	require.NoError(t, err)
	require.Equal(t, "theirs", string(data))
}

func TestCreateOrSetDataRetriesALostReply(t *testing.T) {
	srv := sharedServer(t)
	c := newClient(t, []string{srv.Addr()})
	// The first create is applied and its reply lost: the retry finds the node and
	// sets it, where a plain create would fail with ErrNodeExists.
	p, err := c.Create(testCtx(t), "/once", []byte("x"), OrSetData(), loseFirstReply())
	require.NoError(t, err)
	require.Equal(t, "/once", p)
	_, err = c.Create(testCtx(t), "/twice", []byte("x"), loseFirstReply())
	require.ErrorIs(t, err, zk.ErrNodeExists)
}
