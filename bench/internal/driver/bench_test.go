package driver

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zkrecipes/zkrecipes/zktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestSmoke runs tiny versions of the Go contenders' scenarios against a real server
// and renders the report and the plot: the benchmark's plumbing, not its figures.
func TestSmoke(t *testing.T) {
	srv := zktest.NewServer(t)
	t.Setenv("ZK_SERVERS", srv.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tg, err := startTarget(ctx, 1, 0)
	require.NoError(t, err)
	defer tg.Close()

	b := &bench{tg: tg, results: map[string]map[string][]measurement{}}
	for _, name := range []string{limitName, zkLockName, recipesName} {
		cs, err := startContenders(ctx, Config{Contenders: []string{name}}, tg.addr)
		require.NoError(t, err)
		b.contenders = append(b.contenders, cs...)
	}
	s := Settings{Runs: 1, Cycles: 20, Warmup: 2, Duration: 300 * time.Millisecond, Rounds: 3,
		Settle: 20 * time.Millisecond, Waiters: 3, Scale: 5}
	var ran []scenario
	for _, sc := range scenarios(s) {
		switch sc.id {
		case "uncontended", "mutex-2", "waiters", "handover", "semaphore":
			b.scenario(ctx, sc, s.Runs)
			ran = append(ran, sc)
		}
	}
	require.Empty(t, b.failures)

	rep := b.report(ctx, s, ran, time.Second)
	cycles, ok := rep.row("uncontended-requests")
	require.True(t, ok)
	// go-zookeeper pings 20 s after it connects, busy or not: on a loaded machine (make
	// test's parallel jobs under -race) one ping can fall in a measured part, one
	// request more in s.Cycles; two would not.
	onePing := 1.5 / float64(s.Cycles)
	require.InDelta(t, 3, cycles.value(zkLockName), onePing, "zk.Lock's uncontended cycle is create, list, delete")
	require.InDelta(t, 4, cycles.value(limitName), onePing, "an uncontended cycle is create, list, the holder's watch on its node, delete")
	// Ours sends the listing once the create is written, in the create's flight, and
	// the holder's watch on its node once it holds: a release that comes first (as in
	// this loop) leaves it unsent.
	require.GreaterOrEqual(t, cycles.value(recipesName), 3.0, "an uncontended cycle is create, list, delete")
	require.LessOrEqual(t, cycles.value(recipesName), 4.0, "and at most the holder's watch on its node")
	watches, _ := rep.row("waiters-watches")
	waiters := float64(s.Waiters)
	require.InDelta(t, (2*waiters+1)/waiters, watches.value(recipesName), 0.01,
		"each waiter watches the node before it and its own (set in one write), the holder its own")
	handover, _ := rep.row("handover-p50")
	require.False(t, math.IsNaN(handover.value(recipesName)))
	semaphore, _ := rep.row("semaphore-rate")
	require.True(t, math.IsNaN(semaphore.value(zkLockName)), "zk.Lock has no semaphore")

	dir := t.TempDir()
	md := rep.Markdown(filepath.Join(dir, "BENCHMARKS.md"), filepath.Join(dir, "b.png"), "", nil)
	require.Contains(t, md, "| uncontended cycle, p50 (µs)")
	require.Contains(t, md, "](b.png)")
	require.NoError(t, rep.Save(filepath.Join(dir, "results.json")))
	again, err := LoadReport(filepath.Join(dir, "results.json"))
	require.NoError(t, err)
	require.Equal(t, rep.Table(), again.Table())
	for _, c := range b.contenders {
		require.NoError(t, c.Close())
	}
}

func TestPercentileAndMedian(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3}
	require.Equal(t, time.Duration(3), Percentile(ds, 50))
	require.Equal(t, time.Duration(5), Percentile(ds, 99))
	require.Equal(t, time.Duration(1), Percentile(ds, 1))
	require.Equal(t, 2.5, median([]float64{4, 1, 3, 2}))
	require.True(t, math.IsNaN(median(nil)))
}

func TestSortBySequence(t *testing.T) {
	names := []string{"write-0000000010", "read-0000000002", "_c_x-lock-0000000001"}
	sortBySequence(names)
	require.Equal(t, []string{"_c_x-lock-0000000001", "read-0000000002", "write-0000000010"}, names)
	held, _ := reader(names, 1)
	require.True(t, held)
	held, watch := reader([]string{"write-0000000001", "read-0000000002", "read-0000000003"}, 2)
	require.False(t, held)
	require.Equal(t, 0, watch)
}

// TestEnsembleSmoke runs the ensemble mode's plumbing: sessions spread over three
// members, requests and watches counted per member and adding up to the totals.
func TestEnsembleSmoke(t *testing.T) {
	t.Setenv("ZK_SERVERS", "")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tg, err := startTarget(ctx, 3, 0)
	require.NoError(t, err)
	defer tg.Close()
	require.Len(t, tg.pids, 3, "the three servers are our children, so their CPU is counted")

	cs, err := startContenders(ctx, Config{Contenders: []string{recipesName}}, tg.addr)
	require.NoError(t, err)
	b := &bench{tg: tg, contenders: cs, results: map[string]map[string][]measurement{}}
	defer cs[0].Close()
	s := Settings{Runs: 1, Cycles: 20, Warmup: 2, Duration: 300 * time.Millisecond, Rounds: 3,
		Settle: 20 * time.Millisecond, Waiters: 6, Scale: 5, Members: 3}
	var ran []scenario
	for _, sc := range scenarios(s) {
		if sc.id == "uncontended" || sc.id == "waiters" {
			b.scenario(ctx, sc, s.Runs)
			ran = append(ran, sc)
		}
	}
	require.Empty(t, b.failures)

	rep := b.report(ctx, s, ran, time.Second)
	cycles, _ := rep.row("uncontended-requests")
	require.GreaterOrEqual(t, cycles.value(recipesName), 3.0, "an uncontended cycle is create, list, delete")
	require.LessOrEqual(t, cycles.value(recipesName), 4.0, "and at most the holder's watch, which a release that comes first leaves unsent")
	sum := 0.0
	for i := 1; i <= 3; i++ {
		rw, ok := rep.row(fmt.Sprintf("uncontended-requests-m%d", i))
		require.True(t, ok)
		sum += rw.value(recipesName)
	}
	require.InDelta(t, cycles.value(recipesName), sum, 0.01, "the members' requests add up to the total")
	m := rep.Results["waiters"][recipesName][0]
	watches := 0
	for _, w := range m.WatchesByMember {
		watches += w
	}
	require.Equal(t, m.Watches, watches, "the members' watches add up to the total")
	require.GreaterOrEqual(t, m.Watches, s.Waiters)
}

// The latency mode: the contenders reach the server through the delaying proxy, a
// request through it is the unit, and the lock scenarios get a figure in round
// trips.
func TestLatencySmoke(t *testing.T) {
	srv := zktest.NewServer(t)
	t.Setenv("ZK_SERVERS", srv.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tg, err := startTarget(ctx, 1, 0)
	require.NoError(t, err)
	defer tg.Close()
	p, err := startDelayProxy(tg.addr, time.Millisecond)
	require.NoError(t, err)
	defer p.Close()
	rt, err := calibrate(ctx, p.Addr())
	require.NoError(t, err)
	require.Positive(t, rt)

	cs, err := startContenders(ctx, Config{Contenders: []string{recipesName}}, p.Addr())
	require.NoError(t, err)
	b := &bench{tg: tg, contenders: cs, results: map[string]map[string][]measurement{}}
	s := Settings{Runs: 1, Cycles: 5, Warmup: 1, Rounds: 2, Settle: 20 * time.Millisecond, Delay: time.Millisecond, RoundTrip: rt}
	var ran []scenario
	for _, sc := range scenarios(s) {
		if sc.id == "uncontended" || sc.id == "handover" {
			b.scenario(ctx, sc, s.Runs)
			ran = append(ran, sc)
		}
	}
	require.Empty(t, b.failures)
	rep := b.report(ctx, s, ran, time.Second)
	for _, id := range []string{"uncontended-rt", "handover-rt"} {
		row, ok := rep.row(id)
		require.True(t, ok, id)
		require.False(t, math.IsNaN(row.value(recipesName)), id)
	}
	require.Contains(t, rep.Markdown(filepath.Join(t.TempDir(), "B.md"), "", "", nil), "delays every byte by 1ms each way")
	// The main report repeats the latency run's table and targets in a section.
	withRT := (&Report{}).Markdown(filepath.Join(t.TempDir(), "B.md"), "", "", rep)
	require.Contains(t, withRT, "## In round trips")
	require.Contains(t, withRT, "uncontended cycle, p50 (round trips)")
	require.Contains(t, withRT, "latch hand-over ≤ 1.4 round trips")
	for _, c := range cs {
		require.NoError(t, c.Close())
	}
}
