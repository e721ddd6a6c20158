package driver

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/zktest"
)

// TestRecipeSmoke runs tiny versions of the cache and group scenarios with the Go
// contenders: the copy holds every node of the tree (cache-load fails otherwise),
// every write and every join is seen; the plumbing, not the figures.
func TestRecipeSmoke(t *testing.T) {
	srv := zktest.NewServer(t)
	t.Setenv("ZK_SERVERS", srv.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tg, err := startTarget(ctx, 1, 0)
	require.NoError(t, err)
	defer tg.Close()
	defer func(f []int) { treeFanout = f }(treeFanout)
	treeFanout = []int{3, 3, 3}

	cs, err := startContenders(ctx, Config{Contenders: []string{limitName, recipesName}}, tg.addr)
	require.NoError(t, err)
	b := &bench{tg: tg, contenders: cs, results: map[string]map[string][]measurement{}}
	s := Settings{Runs: 1, Cycles: 50, Rounds: 3}
	var ran []scenario
	for _, sc := range recipeScenarios(s) {
		b.scenario(ctx, sc, s.Runs)
		ran = append(ran, sc)
	}
	require.Len(t, ran, 5)
	require.Empty(t, b.failures)

	rep := b.report(ctx, s, ran, time.Second)
	for _, id := range []string{"cache-load", "cache-load-treecache"} {
		load := rep.Results[id][recipesName][0]
		require.Equal(t, treeSize()+1, load.Res.Ops, "the copy holds the root and every node below it")
	}
	for _, id := range []string{"cache-propagation-p50", "cache-storm-requests", "group-join-p50"} {
		row, ok := rep.row(id)
		require.True(t, ok, id)
		require.False(t, math.IsNaN(row.value(recipesName)), id)
	}
	prop, _ := rep.row("cache-propagation-p50")
	require.False(t, math.IsNaN(prop.value(limitName)))
	for _, c := range cs {
		require.NoError(t, c.Close())
	}
}
