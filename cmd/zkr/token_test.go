package main

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/recipes/mutex"
)

// The fencing token an operator reads, in zkr inspect --json and on zkr ui's page,
// is the one the holder got: here a holder that waited, behind which another
// participant queued before its grant, so that the lock path's children changed
// between its node's creation and its grant.
func TestTheTokenShownIsTheHolders(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := testCtx(t)
	hs := startUI(t, h.client, "/")
	lock := func(id string) *mutex.Mutex {
		m, err := mutex.New(zkrtest.Client(t, []string{h.servers}), "/token", mutex.WithID(id))
		require.NoError(t, err)
		return m
	}
	a, b, c := lock("a"), lock("b"), lock("c")
	require.NoError(t, a.Acquire(ctx))
	granted := make(chan error, 2)
	go func() { granted <- b.Acquire(ctx) }()
	h.waitChildren("/token", 2)
	go func() { granted <- c.Acquire(ctx) }()
	h.waitChildren("/token", 3)
	require.NoError(t, a.Release(ctx))
	require.NoError(t, <-granted)
	require.True(t, b.IsAcquired())
	want := b.FencingToken()

	code, stdout, stderr := runZkr(t, []string{"ZK_SERVERS=" + h.servers}, "inspect", "/token", "--json")
	require.Equal(t, 0, code, stderr)
	var q queue
	require.NoError(t, json.Unmarshal([]byte(stdout), &q), stdout)
	require.Equal(t, "b", q.Participants[0].ID)
	require.Equal(t, want, q.Participants[0].FencingToken, "zkr inspect --json")

	eventually(t, "the page shows b holding", func() bool {
		var n apiNode
		require.Equal(t, http.StatusOK, getJSON(t, hs.URL+"/api/node?path=/token", &n))
		return states(n) == "b:holder c:waiting" && n.Recipe.Participants[0].FencingToken == want
	})
	require.NoError(t, b.Release(ctx))
	require.NoError(t, <-granted)
	require.NoError(t, c.Release(ctx))
}
