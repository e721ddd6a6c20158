package driver

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/zktest"
)

// TestCounterSmoke runs short counter scenarios with zkrecipes: the counter ends at
// the adds applied (measure fails otherwise), every add costs a write at least, one
// session's adds mostly nothing more (the counter remembers the version it wrote),
// and the lock's takes and the adds that gave up are shares of the adds.
func TestCounterSmoke(t *testing.T) {
	srv := zktest.NewServer(t)
	t.Setenv("ZK_SERVERS", srv.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tg, err := startTarget(ctx, 1, 0)
	require.NoError(t, err)
	defer tg.Close()

	cs, err := startContenders(ctx, Config{Contenders: []string{recipesName}}, tg.addr)
	require.NoError(t, err)
	b := &bench{tg: tg, contenders: cs, results: map[string]map[string][]measurement{}}
	// A second, not less: on a machine busy enough, eight sessions made no add at all
	// in 300 ms, and the checks below need adds to look at.
	s := Settings{Runs: 1, Duration: time.Second, Rounds: 10}
	var ran []scenario
	for _, sc := range scenarios(s) {
		if sc.id == "counter-1" || sc.id == "counter-8" {
			b.scenario(ctx, sc, s.Runs)
			ran = append(ran, sc)
		}
	}
	require.Len(t, ran, 2)
	require.Empty(t, b.failures)

	rep := b.report(ctx, s, ran, time.Second)
	for _, n := range []string{"1", "8"} {
		m := rep.Results["counter-"+n][recipesName][0]
		require.Positive(t, m.Res.Ops, n)
		require.GreaterOrEqual(t, m.Res.Total, m.Res.Ops, n)
		requests, ok := rep.row("counter-" + n + "-requests")
		require.True(t, ok)
		require.GreaterOrEqual(t, requests.value(recipesName), 1.0, "an add is a write at least: %s sessions", n)
		for _, id := range []string{"-locked", "-failed"} {
			share, _ := rep.row("counter-" + n + id)
			require.GreaterOrEqual(t, share.value(recipesName), 0.0)
			require.LessOrEqual(t, share.value(recipesName), 100.0)
		}
	}
	alone, _ := rep.row("counter-1-requests")
	require.Less(t, alone.value(recipesName), 1.5, "alone, an add is one write but for the first few")
	locked, _ := rep.row("counter-1-locked")
	require.Zero(t, locked.value(recipesName), "one session never loses a race, so never takes the lock")
	for _, c := range cs {
		require.NoError(t, c.Close())
	}
}
