package driver

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/zktest"
)

// TestScaleSmoke runs the scale curves at their smallest sizes (make bench-scale's
// plumbing, within make test) and checks the counts, which do not depend on the
// machine's load: one lock watch per waiter, the requests of a contended
// acquisition, a cache's reads, a partition member's watches following the
// members, not the items, the assignment's memory in proportion to the items and
// members, a group member's following every member, the followers' one persistent
// watch beside the one-shot mode's watch per node, a latch candidate's one watch
// (the leader's and the next in line's own besides); then renders the report and its
// plots. Curator and kazoo join when make curator-peer and scripts/deps.sh kazoo
// have installed them.
func TestScaleSmoke(t *testing.T) {
	contenders := []string{recipesName, oneShotName}
	curator := os.Getenv("ZKTEST_CURATOR")
	if curator == "" {
		curator = "5.7"
	}
	peer := filepath.Join("..", "..", "..", "build", "curator-peer", curator)
	if _, err := os.Stat(filepath.Join(peer, "CuratorPeer.class")); err == nil {
		contenders = append(contenders, curatorName)
	} else {
		t.Logf("without Curator (make curator-peer): %v", err)
	}
	if err := exec.Command(kazooPython, "-c", "import kazoo").Run(); err == nil {
		contenders = append(contenders, kazooName)
	} else {
		t.Logf("without kazoo (scripts/deps.sh kazoo): %v", err)
	}
	// Sessions of a minute, as the driver's own servers allow: with zktest's default
	// of 4 s at most, every session pinged once or more during a slow lock trial on a
	// busy machine, one request more per acquisition in the counts checked below.
	srv := zktest.NewServer(t, zktest.WithSessionTimeouts(4*time.Second, sessionTimeout))
	t.Setenv("ZK_SERVERS", srv.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	rep, err := RunScale(ctx, ScaleConfig{Contenders: contenders, Smallest: true, Peer: peer,
		Kazoo: filepath.Join("..", "..", "kazoo-peer", "kazoo_peer.py")}, []string{"-curves", "-smallest"})
	require.NoError(t, err)
	require.Empty(t, rep.Failures)
	figure := func(recipe, contender, id string) float64 {
		t.Helper()
		for _, p := range rep.Points {
			if p.Recipe == recipe && p.Contender == contender {
				v, ok := p.Figures[id]
				require.True(t, ok, "%s %s has no %s", recipe, contender, id)
				return v
			}
		}
		t.Fatalf("no %s point for %s", recipe, contender)
		return 0
	}
	waiters := float64(lockSizes[0])
	require.InDelta(t, (2*waiters+1)/waiters, figure("lock", recipesName, "lock-watches"), 0.01,
		"a waiter watches the one node before it and its own (set in one write), the holder its own")
	require.InDelta(t, 5, figure("lock", recipesName, "requests"), 0.5,
		"create, list, one setWatches of the node before and ours, list, delete; the first holder's 3 or 4")
	require.Positive(t, figure("lock", recipesName, "bytes"))
	require.InDelta(t, 2, figure("cache", recipesName, "requests"), 0.1, "a node's data and its children, each read once")
	require.InDelta(t, 2, figure("cache", oneShotName, "requests"), 0.1, "a node's data and its children, each read once")
	nodes := float64(fanoutSize(cacheShapes[0]))
	require.LessOrEqual(t, figure("cache", recipesName, "watches")*nodes, 2.0, "one persistent watch for the tree")
	require.InDelta(t, 1, figure("cache", oneShotName, "watches"), 0.01, "a watched path per node")
	// A created or changed leaf is read once, a deleted one not at all (on 3.8, whose
	// notifications carry no zxid, a creation and a deletion read the parent too); on
	// one-shot watches the parent is listed again as well.
	require.LessOrEqual(t, figure("cache", recipesName, "change-requests"), 4.0/3+0.05)
	require.Less(t, figure("cache", recipesName, "change-requests"), figure("cache", oneShotName, "change-requests"))
	// 4 members before the join: the group's children and 4 member nodes, our own
	// node, and a stray lock node or two; following every lock, it was 54.
	require.LessOrEqual(t, figure("partition", recipesName, "watches"), 12.0)
	require.Equal(t, 1.0, figure("partition", recipesName, "moved-join"), "the fewest items move")
	require.Equal(t, 1.0, figure("partition", recipesName, "moved-leave"), "the fewest items move")
	// The assignment's memory grows with the names, not their pairs (issue 39).
	require.Positive(t, figure("assign", recipesName, "start"))
	require.Less(t, figure("assign", recipesName, "bytes-start"), 512.0, "bytes per item + member")
	// The bench's members promise a fixed payload (group.FixedPayload): each watches
	// the group's children and its own node, not every member's node (10 at this size
	// without the option).
	require.InDelta(t, 2, figure("group", recipesName, "watches"), 0.01, "a member watches the group and its own node")
	require.InDelta(t, 2, figure("group", oneShotName, "watches"), 0.01, "a member watches the group's children and its own node")
	require.Less(t, figure("group", recipesName, "bytes"), figure("group", oneShotName, "bytes"), "a notification names the member: no listing")
	require.Positive(t, figure("group", recipesName, "heap"))
	require.Positive(t, figure("group", recipesName, "join-p99"))
	instances := float64(discoverySizes[0])
	require.InDelta(t, 1+1/instances, figure("discovery", recipesName, "watches"), 0.01, "each registration watches its node, the provider the service")
	require.InDelta(t, 2+1/instances, figure("discovery", oneShotName, "watches"), 0.01, "the provider watches every instance too")
	// cons tells the changing session's requests from the followers': the registrar
	// creates its node, watches it, checks it is still its own and deletes it; the
	// provider reads a new instance once and a deleted one not at all (3.8, whose
	// notifications carry no zxid, reads the service's node for each too).
	require.InDelta(t, 4, figure("discovery", recipesName, "changer-requests"), 0.3, "create, exists, exists, delete")
	require.InDelta(t, 2, figure("discovery", recipesName, "follower-requests"), 1.05, "one read, or three on 3.8")
	require.InDelta(t, 2, figure("group", recipesName, "follower-requests"), 1.05, "a member reads a joiner once (three times on 3.8)")
	require.Greater(t, figure("group", recipesName, "changer-requests"), float64(groupSizes[0]), "the joiner loads its view of every member")
	require.Positive(t, figure("discovery", recipesName, "heap"))
	require.Positive(t, figure("discovery", recipesName, "join-p99"))
	candidates := float64(electionSizes[0])
	require.InDelta(t, (candidates+1)/candidates, figure("election", recipesName, "watches"), 0.01,
		"every candidate but the leader watches the one before it, the leader its own, and the next in line its own, since it leads next")
	require.Positive(t, figure("election", recipesName, "handover-p99"))
	require.Less(t, figure("election", recipesName, "requests"), 10.0, "a hand-over reaches one candidate, not all")
	if len(contenders) > 1 && contenders[1] == curatorName {
		require.InDelta(t, 1, figure("lock", curatorName, "lock-watches"), 0.01)
		require.Positive(t, figure("group", curatorName, "join-p99"))
		require.Positive(t, figure("discovery", curatorName, "join-p99"))
		require.Positive(t, figure("discovery", curatorName, "changer-requests"))
		require.Positive(t, figure("discovery", curatorName, "follower-requests"))
		require.InDelta(t, 0.9, figure("election", curatorName, "watches"), 0.01)
	}

	dir := t.TempDir()
	md, plots := rep.Markdown(filepath.Join(dir, "BENCHMARKS-scale.md"), "")
	require.Contains(t, md, "other processes kept", "the report says what its times are worth")
	require.Contains(t, md, "## Goals (issue 36)")
	require.Contains(t, md, "](BENCHMARKS-scale-partition.svg)")
	require.Len(t, plots, len(ScaleRecipes))
	for file, svg := range plots {
		require.True(t, strings.HasPrefix(svg, "<svg"), file)
		require.Contains(t, svg, "<circle", "%s has points", file)
	}
	require.NoError(t, rep.Save(filepath.Join(dir, "scale.json")))
	again, err := LoadScaleReport(filepath.Join(dir, "scale.json"))
	require.NoError(t, err)
	require.Equal(t, rep.Table(), again.Table())
}
