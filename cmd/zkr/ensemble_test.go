package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// zkr ensemble lists a dynamic ensemble's members from its configuration, with
// their modes, and marks the one zkr is on; a static one from --servers.
func TestEnsemble(t *testing.T) {
	t.Parallel()
	e := zktest.NewEnsemble(t, 1, zktest.WithDynamicConfig())
	c := zkrtest.Client(t, []string{e.Addr(0)})
	i, err := e.Join(testCtx(t), "")
	require.NoError(t, err)
	_, err = c.Reconfig(testCtx(t), []string{e.ServerLine(i)}, nil, -1)
	require.NoError(t, err)

	code, stdout, stderr := runZkr(t, []string{"ZK_SERVERS=" + e.Addr(0)}, "ensemble", "--json")
	require.Equal(t, 0, code, stderr)
	var v ensembleView
	require.NoError(t, json.Unmarshal([]byte(stdout), &v), stdout)
	require.Equal(t, e.Addr(0), v.Connected)
	require.NotEmpty(t, v.Version)
	require.Len(t, v.Members, 2, stdout)
	require.ElementsMatch(t, []string{"leader", "follower"}, []string{v.Members[0].Mode, v.Members[1].Mode})
	v.Members[0].Mode, v.Members[1].Mode = "", ""
	require.Equal(t, []memberStatus{
		{ID: 1, Role: "participant", Client: e.Addr(0), Connected: true},
		{ID: 2, Role: "participant", Client: e.Addr(1)},
	}, v.Members)

	code, stdout, stderr = runZkr(t, []string{"ZK_SERVERS=" + e.Addr(0)}, "ensemble")
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 4, stdout)
	require.Equal(t, []string{"*", "1", "participant", e.Addr(0)}, strings.Fields(lines[1])[:4])
	require.Equal(t, []string{"2", "participant", e.Addr(1)}, strings.Fields(lines[2])[:3])

	// A static configuration: the servers given, one of them down.
	srv := zktest.NewServer(t)
	code, stdout, stderr = runZkr(t, []string{"ZK_SERVERS=" + srv.Addr() + ",127.0.0.1:1"}, "ensemble", "--json")
	require.Equal(t, 0, code, stderr)
	v = ensembleView{}
	require.NoError(t, json.Unmarshal([]byte(stdout), &v), stdout)
	require.Equal(t, []memberStatus{
		{Client: "127.0.0.1:1", Mode: "unreachable"},
		{Client: srv.Addr(), Mode: "standalone", Connected: true},
	}, v.Members)

	code, _, stderr = runZkr(t, nil, "ensemble", "extra")
	require.Equal(t, exitUsage, code)
	require.Contains(t, stderr, "takes no arguments")
}
