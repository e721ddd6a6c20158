package driver

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/zktest"
)

// TestPartitionSmoke runs one round of each partition scenario with zkrecipes and
// kazoo: every change settles, moves at least the fewest items possible, costs
// requests and work; kazoo, which releases everything on every change, pauses every
// item that stays. The plumbing, not the figures.
func TestPartitionSmoke(t *testing.T) {
	contenders := []string{recipesName, kazooName}
	if err := exec.Command(kazooPython, "-c", "import kazoo").Run(); err != nil {
		t.Skipf("python3-kazoo is not installed (scripts/deps.sh kazoo): %v", err)
	}
	srv := zktest.NewServer(t)
	t.Setenv("ZK_SERVERS", srv.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	tg, err := startTarget(ctx, 1, 0)
	require.NoError(t, err)
	defer tg.Close()

	cs, err := startContenders(ctx, Config{Contenders: contenders, Kazoo: filepath.Join("..", "..", "kazoo-peer", "kazoo_peer.py")}, tg.addr)
	for _, c := range cs {
		defer c.Close()
	}
	require.NoError(t, err)
	b := &bench{tg: tg, contenders: cs, results: map[string]map[string][]measurement{}}
	s := Settings{Runs: 1, Rounds: 10}
	var ran []scenario
	for _, sc := range partitionScenarios(s) {
		b.scenario(ctx, sc, s.Runs)
		ran = append(ran, sc)
	}
	require.Empty(t, b.failures)

	rep := b.report(ctx, s, ran, time.Second)
	fewest := map[string]int{"partition-join": 4, "partition-leave": 6, "partition-loss": 6}
	for _, sc := range ran {
		for _, c := range contenders {
			m := rep.Results[sc.id][c][0]
			require.Equal(t, 1, m.Res.Ops, "%s, %s", sc.id, c)
			require.Equal(t, fewest[sc.id], m.Res.Fewest, "%s, %s", sc.id, c)
			require.GreaterOrEqual(t, m.Res.Moved, m.Res.Fewest, "%s, %s", sc.id, c)
			require.Positive(t, m.Res.Latencies[0], "%s, %s", sc.id, c)
			require.Positive(t, m.Res.WorkLost, "%s, %s", sc.id, c)
			require.Positive(t, m.Res.Requests, "%s, %s", sc.id, c)
			if c == kazooName {
				require.Equal(t, partitionItems-m.Res.Moved, m.Res.PausedUnmoved, "kazoo pauses every item: %s", sc.id)
			}
		}
	}
	_, ok := rep.row("partition-join-paused")
	require.True(t, ok)
	require.Contains(t, rep.Table(), "zkrecipes/kazoo")
}

// TestFewestMoves checks the fewest moves against changes worked out by hand.
func TestFewestMoves(t *testing.T) {
	owners := balancedOwners(24, 4) // 6 each
	require.Equal(t, 4, fewestMoves(owners, memberIDs(5, 0), 24), "a fifth member takes 4: four keep 5, it gets 4")
	require.Equal(t, 6, fewestMoves(owners, memberIDs(3, 0), 24), "the leaver's 6 move")
	require.Equal(t, 0, fewestMoves(owners, memberIDs(4, 0), 24))
	require.Equal(t, 3, fewestMoves(balancedOwners(7, 1), memberIDs(2, 0), 7), "7 items over 2: the newcomer needs 3")
}
