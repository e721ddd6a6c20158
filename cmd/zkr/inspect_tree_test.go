package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
)

// inspect --tree sums up a subtree as a cache loads it.
func TestInspectTree(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	env := []string{"ZK_SERVERS=" + h.servers}
	ctx := testCtx(t)
	for p, data := range map[string]string{
		"/config/db/url": "postgres://primary", "/config/db/pool": "10", "/config/feature/x": "on",
	} {
		_, err := h.client.Create(ctx, p, []byte(data), framework.CreatingParents())
		require.NoError(t, err)
	}
	_, err := h.client.Set(ctx, "/config/db/pool", []byte("20"), -1)
	require.NoError(t, err)
	_, err = h.client.Create(ctx, "/config/members", nil)
	require.NoError(t, err)
	_, err = h.client.Create(ctx, "/config/members/m-", []byte("me"), framework.Ephemeral(), framework.Sequential())
	require.NoError(t, err)

	code, stdout, stderr := runZkr(t, env, "inspect", "/config", "--tree", "--json")
	require.Equal(t, 0, code, stderr)
	var s treeSummary
	require.NoError(t, json.Unmarshal([]byte(stdout), &s), stdout)
	require.True(t, s.Exists)
	require.Equal(t, 8, s.Nodes)
	require.Equal(t, 2, s.Levels)
	require.EqualValues(t, len("postgres://primary")+len("20")+len("on")+len("me"), s.DataBytes)
	require.Equal(t, 1, s.Ephemeral)
	require.Equal(t, "/config/members", s.LastChanged.Path[:len("/config/members")])
	require.Equal(t, []treeChild{{"db", 3, 20}, {"feature", 2, 2}, {"members", 2, 2}}, s.Children)
	require.Empty(t, s.Refused)

	code, stdout, stderr = runZkr(t, env, "inspect", "/config", "--tree", "--depth", "1")
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Equal(t, "/config: 4 nodes, 1 levels below, 0 bytes of data, 0 ephemeral", lines[0])
	require.Equal(t, []string{"CHILD", "NODES", "BYTES"}, strings.Fields(lines[2]))
	require.Equal(t, []string{"db", "1", "0"}, strings.Fields(lines[3]))

	code, stdout, stderr = runZkr(t, env, "inspect", "/nowhere", "--tree")
	require.Equal(t, exitNoNode, code)
	require.Empty(t, stdout)
	require.Equal(t, "zkr inspect: /nowhere: no such node\n", stderr)
	code, _, stderr = runZkr(t, env, "inspect", "nowhere", "--tree")
	require.Equal(t, exitUsage, code, stderr)
}
