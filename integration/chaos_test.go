package integration

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/zktest"
)

var (
	chaosDuration = flag.Duration("chaos.duration", 30*time.Second, "how long TestChaos runs its workloads under faults (make chaos DURATION=10m)")
	chaosSeed     = flag.Uint64("chaos.seed", 0, "the fault schedule's random seed; 0 picks one (the report prints it)")
)

const chaosSessionTimeout = 2 * time.Second

// TestChaos runs every recipe on a three-server ensemble while faults come and go,
// and checks what the recipes promise: never two live holders where one is allowed,
// fencing tokens that only grow, Lost closing within the session timeout and a
// second of a session's loss (or of a paused process's SIGCONT), no grant on a dead
// session's node; caches that hear no impossible history and hold the server's tree
// soon after the faults stop; items of a partition whose works never overlap and that
// each have one owner again once the faults stop; group members whose views are exact
// again once the faults stop; persistent nodes back in place, with their latest data,
// once the faults stop; once the faults stop, every waiter through within the
// liveness limit; and once every client is closed, no node and no goroutine left
// behind. With -chaos.sample it is a soak, failing on growth that does not level off.
// It prints what it did and found.
func TestChaos(t *testing.T) {
	seed := *chaosSeed
	if seed == 0 {
		seed = rand.Uint64()
	}
	e := zktest.NewEnsemble(t, 3, zktest.WithContainerCheckInterval(500*time.Millisecond))
	t.Logf("a three-server ensemble of ZooKeeper %s (as the servers say; ZKTEST_ZOOKEEPER chooses), seed %d", e.Version(), seed)
	ignore := goleak.IgnoreCurrent()
	ctx, cancel := context.WithTimeout(context.Background(), *chaosDuration+5*time.Minute)
	defer cancel()

	var clients []*chaosClient
	newClients := func(kind string, n int) []*chaosClient {
		var cs []*chaosClient
		for i := range n {
			// Half the clients keep their holds through a short disconnection.
			policy := framework.StandardErrorPolicy
			if i%2 == 1 {
				policy = framework.SessionErrorPolicy
			}
			cc, err := newChaosClient(ctx, fmt.Sprintf("%s-%d", kind, i), e, policy)
			require.NoError(t, err)
			cs, clients = append(cs, cc), append(clients, cc)
		}
		return cs
	}
	closeAll := sync.OnceFunc(func() {
		for _, cc := range clients {
			cc.close()
		}
	})
	t.Cleanup(closeAll)

	var ws []*workload
	for _, mk := range []func() (*workload, error){
		func() (*workload, error) { return mutexWorkload(newClients("mutex", 6)) },
		func() (*workload, error) { return rwlockWorkload(newClients("rwlock", 5)) },
		func() (*workload, error) { return semaphoreWorkload(newClients("semaphore", 5), 2) },
		func() (*workload, error) { return electionWorkload(newClients("election", 4)) },
	} {
		w, err := mk()
		require.NoError(t, err)
		ws = append(ws, w)
	}
	counters, err := newCounterWorkload(newClients("counter", 4))
	require.NoError(t, err)
	if *chaosKeep != "" { // a failing counter's history goes with the servers' record
		counters.dir = filepath.Join(*chaosKeep, "counters")
		require.NoError(t, os.RemoveAll(counters.dir)) // an earlier run's
	}
	shares, err := newSharedWorkload(ctx, newClients("shared", 3))
	require.NoError(t, err)
	witness, err := newWitnessWorkload(ctx, newClients("witness", 2))
	require.NoError(t, err)

	ids := &idSource{}
	pr, err := newPartitionRun(ctx, newClients("partition", 4), ids)
	require.NoError(t, err)

	gw, err := newGroupWatch(ctx, newClients("group", 3))
	require.NoError(t, err)

	nw, err := newNodeWatch(ctx, newClients("persistent", 3))
	require.NoError(t, err)

	dw, err := newDiscoveryWatch(ctx, newClients("discovery", 3))
	require.NoError(t, err)

	cacheClients := newClients("cache", 4)
	cw, err := newCacheWatch(ctx, cacheClients[0], cacheClients[1:])
	require.NoError(t, err)

	paused := startPausedProcess(t, e, ws[0]) // on the mutex's path

	began := time.Now()
	keepDir := runDir(*chaosKeep, began, seed)
	// The faults run for the duration; the workloads until every fault is undone and
	// the liveness limit has passed, so that the waiters caught by the last faults
	// show whether they get through.
	runCtx, stop := context.WithTimeout(ctx, *chaosDuration)
	defer stop()
	workCtx, endWork := context.WithCancel(ctx)
	defer endWork()
	for _, w := range ws {
		w.calm = runCtx.Done()
	}
	f := &faults{e: e, clients: clients, say: t.Logf}
	kept := false
	// A run that fails before its report (a final read that cannot be made) still
	// keeps the servers' data and logs and its own records, for whoever reads it.
	t.Cleanup(func() {
		if keepDir == "" || kept || !t.Failed() {
			return
		}
		if err := writeRecords(keepDir, e.Version(), f, witness); err == nil && e.CloseKeeping(keepDir) == nil {
			t.Logf("the run failed early; the servers' data and logs, the fault log and the acknowledged writes are in %s", keepDir)
		}
	})
	var wg, faulting sync.WaitGroup
	faulting.Go(func() { f.run(runCtx, seed) })
	faulting.Go(func() { paused.run(runCtx, f, rand.New(rand.NewPCG(seed, 5)), ids) })
	faulting.Go(func() { cw.write(runCtx, rand.New(rand.NewPCG(seed, 3))) })
	var soak *sampler
	if *chaosSample > 0 {
		soak = newSampler(e, *chaosSample)
		wg.Go(func() { soak.run(runCtx) })
	}
	// The phases after the faults are logged with their times, so that a long run
	// that overstays says where.
	phase := func(what string) { t.Logf("%s, %s after the start", what, time.Since(began).Round(time.Millisecond)) }
	var lastFault time.Time
	wg.Go(func() {
		faulting.Wait()
		lastFault = time.Now()
		phase("every fault undone")
		// A phase that overstays may be the ensemble's doing: the servers' modes say.
		watching, stopWatching := context.WithCancel(ctx)
		var modes sync.WaitGroup
		defer modes.Wait()
		defer stopWatching()
		modes.Go(func() { logModes(watching, e, func(m string) { phase("the servers: " + m) }) })
		// The caches, the partition and the group settle while the locks' waiters
		// show that they get through.
		var settling sync.WaitGroup
		settling.Go(func() {
			cw.settle(ctx, e)
			cw.close(ctx)
			phase("the caches settled and closed")
			pr.settle(ctx, lastFault)
			pr.close(ctx)
			phase("the partition settled and closed")
			gw.settle(ctx, lastFault)
			gw.close(ctx)
			phase("the group settled and closed")
			nw.settle(ctx, lastFault)
			nw.close(ctx)
			phase("the persistent nodes settled and closed")
			dw.settle(ctx, lastFault)
			dw.close()
			phase("the service discovery settled and closed")
		})
		pause(ctx, livenessLimit)
		endWork()
		phase("the liveness limit passed, the work told to end")
		settling.Wait()
	})
	for k, w := range ws {
		for i := range w.clients {
			rng := rand.New(rand.NewPCG(seed, uint64(100*(k+1)+i)))
			wg.Go(func() { w.work(workCtx, i, rng, ids) })
		}
	}
	for i := range counters.clients {
		rng := rand.New(rand.NewPCG(seed, uint64(1000+i)))
		wg.Go(func() { counters.work(runCtx, i, rng) })
	}
	wg.Go(func() { counters.retire(runCtx) })
	for i := range shares.clients {
		rng := rand.New(rand.NewPCG(seed, uint64(2000+i)))
		wg.Go(func() { shares.work(runCtx, i, rng) })
	}
	for i := range witness.clients {
		rng := rand.New(rand.NewPCG(seed, uint64(5000+i)))
		wg.Go(func() { witness.work(runCtx, i, rng) })
	}
	for i := range nw.nodes {
		rng := rand.New(rand.NewPCG(seed, uint64(3000+i)))
		wg.Go(func() { nw.work(runCtx, i, rng) })
	}
	for i := range dw.kept {
		rng := rand.New(rand.NewPCG(seed, uint64(4000+i)))
		wg.Go(func() { dw.work(runCtx, i, rng) })
	}
	wg.Wait()
	phase("every workload over")
	ran := lastFault.Sub(began)
	require.NoError(t, counters.finish(ctx))
	require.NoError(t, shares.finish(ctx))
	require.NoError(t, witness.finish(ctx))
	phase("the counter's and the shared value's histories checked")
	if keepDir != "" {
		require.NoError(t, writeRecords(keepDir, e.Version(), f, witness))
	}
	if soak != nil && *chaosPlot != "" {
		require.NoError(t, soak.plot(*chaosPlot))
	}

	// Every acquisition is over, released, cancelled or failed, and the clients are
	// still open: no lock, lease or election node may remain once background deletes
	// are done and the sessions the clients gave up have expired.
	orphans, err := nodesLeft(ctx, e, func(st *framework.Stat) bool { return st.EphemeralOwner != 0 })
	require.NoError(t, err)
	// Every client closed: nothing at all, the servers deleting the empty containers.
	closeAll()
	paused.close()
	leftovers, err := nodesLeft(ctx, e, func(*framework.Stat) bool { return true })
	require.NoError(t, err)
	// The servers restarted during the run wait for their processes, as the first did.
	// So do the proxies between the servers, which listen again after a fault and
	// carry the servers' connections to each other.
	leaked := goleak.Find(ignore, goleak.IgnoreAnyFunction("github.com/zkrecipes/zkrecipes/zktest.(*member).launch.func1"),
		goleak.IgnoreAnyFunction("github.com/zkrecipes/zkrecipes/zktest.(*Proxy).acceptLoop"),
		goleak.IgnoreAnyFunction("github.com/zkrecipes/zkrecipes/zktest.(*Proxy).serve"),
		goleak.IgnoreAnyFunction("github.com/zkrecipes/zkrecipes/zktest.(*Proxy).serve.func1"))

	r := report{version: e.Version(), seed: seed, ran: ran, faults: f, workloads: append(ws, pr.items...), counter: counters, shared: shares, witness: witness, caches: cw, partition: pr, group: gw, nodes: nw, discovery: dw, clients: clients,
		orphans: orphans, leftovers: leftovers, leaked: leaked, lastFault: lastFault, paused: paused, soak: soak}
	t.Log("\n" + r.String())
	switch {
	case keepDir == "":
	case *chaosKeepAll || r.violations() > 0 || len(r.found.losses) > 0:
		kept = true
		require.NoError(t, r.keep(keepDir, e))
		t.Logf("the servers' data, the fault log and the acknowledged writes are in %s (scripts/txnlog.sh %[1]s reads them)", keepDir)
	default:
		kept = true
		require.NoError(t, os.RemoveAll(keepDir))
	}
	require.NoError(t, f.err)
	require.Zero(t, r.violations(), "violations; see the report above")
}

// nodesLeft waits until no node under /chaos is one that counts, and returns those
// still there if that does not happen.
func nodesLeft(ctx context.Context, e *zktest.Ensemble, counts func(*framework.Stat) bool) ([]string, error) {
	c, err := framework.New(e.Addrs())
	if err != nil {
		return nil, err
	}
	defer c.Close()
	deadline := time.Now().Add(wait)
	for {
		var left []string
		err := walk(c, "/chaos", func(p string, st *framework.Stat) {
			if counts(st) {
				left = append(left, p)
			}
		})
		switch {
		case err == nil && len(left) == 0:
			return nil, nil
		case time.Now().After(deadline):
			return left, err
		case !pause(ctx, 100*time.Millisecond):
			return left, ctx.Err()
		}
	}
}

func walk(c *framework.Client, p string, fn func(string, *framework.Stat)) error {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	names, st, err := c.Children(ctx, p)
	if errors.Is(err, framework.ErrNoNode) {
		return nil
	} else if err != nil {
		return err
	}
	fn(p, st)
	for _, n := range names {
		if err := walk(c, path.Join(p, n), fn); err != nil {
			return err
		}
	}
	return nil
}

type report struct {
	version   string // the servers', as they say
	seed      uint64
	ran       time.Duration
	faults    *faults
	workloads []*workload
	counter   *counterWorkload
	shared    *sharedWorkload
	witness   *witnessWorkload
	caches    *cacheWatch
	partition *partitionRun
	group     *groupWatch
	nodes     *nodeWatch
	discovery *discoveryWatch
	clients   []*chaosClient
	leftovers []string       // nodes left once the clients were closed
	orphans   []string       // ephemeral nodes left while they were open, all work over
	leaked    error          // goleak's verdict
	lastFault time.Time      // when the last fault was undone
	paused    *pausedProcess // the holder process paused now and then
	soak      *sampler       // nil unless sampling (-chaos.sample)
	problems  []string
	found     findings
	// clientLosts are the sessions each client gave up, read once the run is over.
	clientLosts map[*chaosClient][]sessionLost
	// clientStates are the states each client heard, read once the run is over.
	clientStates map[*chaosClient][]stateChange
}

// check gathers every violation: those seen during the run, and those the record
// shows.
func (r *report) check() {
	r.problems = nil
	r.clientLosts = map[*chaosClient][]sessionLost{}
	r.clientStates = map[*chaosClient][]stateChange{}
	for _, cc := range r.clients {
		r.clientLosts[cc] = cc.lostSessions()
		r.clientStates[cc] = cc.stateChanges()
	}
	for _, w := range r.workloads {
		add := func(ps []string) {
			for _, p := range ps {
				r.problems = append(r.problems, w.name+": "+p)
			}
		}
		add(w.violations)
		add(overlaps(w.holds, w.rule))
		if w.register != nil {
			add(w.register.violations)
			add(tokensIncrease(w.holds, w.exclusive))
			for _, h := range w.holds {
				if h.live && h.refused > 0 {
					add([]string{fmt.Sprintf("the register refused %d writes of live %v", h.refused, h)})
				}
			}
		}
		add(lossesUntold(w.holds, r.faults.blackholes, r.clientLosts, r.clientStates))
	}
	losses := append(lostAcks(r.witness.path, r.witness.writes()), r.shared.losses...)
	counted, explained := r.counter.problems(losses)
	r.problems = append(r.problems, counted...)
	r.problems = append(r.problems, r.shared.problems...)
	if r.group.problem != "" {
		r.problems = append(r.problems, "group: "+r.group.problem)
	}
	r.problems = append(r.problems, r.nodes.problems()...)
	r.problems = append(r.problems, r.discovery.problems()...)
	if r.partition.problem != "" {
		r.problems = append(r.problems, "partition: "+r.partition.problem)
	}
	for _, p := range r.caches.problems {
		r.problems = append(r.problems, "cache: "+p)
	}
	r.problems = append(r.problems, stuck(r.workloads, r.lastFault)...)
	r.problems = append(r.problems, r.paused.violations...)
	r.problems = append(r.problems, r.soak.problems()...)
	for _, n := range r.orphans {
		r.problems = append(r.problems, "left behind by the clients, every acquisition over: "+n)
	}
	for _, n := range r.leftovers {
		r.problems = append(r.problems, "left behind after every client closed: "+n)
	}
	if r.leaked != nil {
		r.problems = append(r.problems, "goroutines leaked: "+r.leaked.Error())
	}
	r.found = findings{failures: r.problems, losses: losses, explained: explained, known: lossyServers[r.version]}
}

// lossesUntold finds holders that went on believing more than a second past the point
// where their session was lost: a session timeout after their client was black-holed,
// or the moment their client went Lost with their session. Each comes with the
// states its client heard around it (states may be nil), so that a late signal can be
// told from a missing one.
func lossesUntold(holds []*hold, bhs []blackhole, losts map[*chaosClient][]sessionLost, states map[*chaosClient][]stateChange) []string {
	var problems []string
	believed := func(h *hold, deadline time.Time) bool {
		return h.end.After(deadline) && (h.lostAt.IsZero() || h.lostAt.After(deadline))
	}
	for _, h := range holds {
		for _, b := range bhs {
			if b.caught(h) && believed(h, b.from.Add(h.client.timeout+time.Second)) {
				problems = append(problems, fmt.Sprintf("%v held on past its session timeout and a second after a black-hole at %s%s",
					h, b.from.Format("15:04:05.000"), untoldTimeline(h, states[h.client], b.from)))
			}
		}
		for _, l := range losts[h.client] {
			if l.session == h.session && h.start.Before(l.at) && believed(h, l.at.Add(time.Second)) {
				problems = append(problems, fmt.Sprintf("%v held on a second after its client went Lost at %s%s",
					h, l.at.Format("15:04:05.000"), untoldTimeline(h, states[h.client], l.at)))
			}
		}
	}
	return problems
}

// untoldTimeline is what a hold's client heard from a session timeout and two
// seconds before the loss at at until a second after the hold ended, and when the
// holder was told: the signal it waits on closing (as a goroutine waiting on it saw
// it, when recorded) and the holder stopping. "" without states.
func untoldTimeline(h *hold, states []stateChange, at time.Time) string {
	if states == nil {
		return ""
	}
	from, to := at.Add(-h.client.timeout-2*time.Second), h.end.Add(time.Second)
	var b strings.Builder
	b.WriteString("; its client heard:")
	heard := 0
	for _, s := range states {
		if s.at.Before(from) || s.at.After(to) {
			continue
		}
		heard++
		fmt.Fprintf(&b, " %s %v (session %#x),", s.at.Format("15:04:05.000"), s.state, s.session)
	}
	if heard == 0 {
		fmt.Fprintf(&b, " nothing from %s to %s,", from.Format("15:04:05.000"), to.Format("15:04:05.000"))
	}
	if !h.signalled.IsZero() {
		fmt.Fprintf(&b, " its signal closed at %s,", h.signalled.Format("15:04:05.000"))
	}
	told := "it stopped at " + h.end.Format("15:04:05.000")
	if !h.lostAt.IsZero() && h.lostAt.Before(h.end) {
		told = "Lost closed at " + h.lostAt.Format("15:04:05.000") + ", " + told
	}
	b.WriteString(" " + told)
	return b.String()
}

// lossDelays are, for every hold its client's black-hole found, how long after the
// black-hole began its Lost closed.
func lossDelays(holds []*hold, bhs []blackhole) []time.Duration {
	var ds []time.Duration
	for _, h := range holds {
		for _, b := range bhs {
			if b.caught(h) && h.end.After(b.from) && h.lostAt.After(b.from) {
				ds = append(ds, h.lostAt.Sub(b.from))
			}
		}
	}
	slices.Sort(ds)
	return ds
}

func (r *report) violations() int {
	r.check()
	return r.found.violations()
}

func (r *report) String() string {
	r.check()
	var b strings.Builder
	fmt.Fprintf(&b, "chaos: %s of faults on a 3-server ensemble of ZooKeeper %s, %d clients through proxies, %v sessions, seed %d\n",
		r.ran.Round(time.Second), r.version, len(r.clients), chaosSessionTimeout, r.seed)
	r.faults.mu.Lock()
	kinds := make([]string, 0, len(r.faults.counts))
	for k := range r.faults.counts {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	fmt.Fprintf(&b, "faults injected:\n")
	for _, k := range kinds {
		fmt.Fprintf(&b, "  %-40s %6d\n", k, r.faults.counts[k])
	}
	if es := slices.Sorted(slices.Values(r.faults.elections)); len(es) > 0 {
		fmt.Fprintf(&b, "leader elections after a leader was killed: %d; the ensemble was without a leader for a median %v, at most %v\n",
			len(es), es[len(es)/2].Round(time.Millisecond), es[len(es)-1].Round(time.Millisecond))
	}
	r.faults.mu.Unlock()
	lost := 0
	for _, ls := range r.clientLosts {
		lost += len(ls)
	}
	fmt.Fprintf(&b, "sessions lost (clients that went Lost): %d\n", lost)
	var delays []time.Duration
	for _, w := range r.workloads {
		delays = append(delays, lossDelays(w.holds, r.faults.blackholes)...)
	}
	slices.Sort(delays)
	if len(delays) > 0 {
		fmt.Fprintf(&b, "holders caught by a black-hole: %d; their Lost closed after a median %v, at most %v (allowed: session timeout + 1s)\n",
			len(delays), delays[len(delays)/2].Round(time.Millisecond), delays[len(delays)-1].Round(time.Millisecond))
	}
	fmt.Fprintf(&b, "%-10s %8s %8s %8s %8s %9s %9s  %s\n", "recipe", "holds", "live", "dead", "told", "accepted", "refused", "failures")
	for _, w := range r.workloads {
		live, told := 0, 0
		for _, h := range w.holds {
			if h.live {
				live++
			}
			if !h.lostAt.IsZero() {
				told++
			}
		}
		accepted, refused := "-", "-"
		if w.register != nil {
			accepted, refused = fmt.Sprint(w.register.accepted), fmt.Sprint(w.register.refused)
		}
		fmt.Fprintf(&b, "%-10s %8d %8d %8d %8d %9s %9s  %s\n", w.name, len(w.holds), live,
			len(w.holds)-live, told, accepted, refused, sortedCounts(w.failures))
	}
	fmt.Fprintf(&b, "  (holds: acquisitions; live: the node outlived the hold, so its session was alive throughout;\n"+
		"   dead: the node was gone after the hold (or could not be asked for);\n"+
		"   told: Lost closed during the hold; accepted/refused: writes at the fenced register,\n"+
		"   refused ones coming from holders whose sessions had died, stopped by the fence)\n")
	fmt.Fprintf(&b, "%v\n%v\n%v", r.counter, r.shared, r.witness)
	b.WriteString(r.caches.report())
	b.WriteString(r.partition.report())
	b.WriteString(r.group.report())
	b.WriteString(r.nodes.report())
	b.WriteString(r.discovery.report())
	b.WriteString(r.paused.String())
	b.WriteString(livenessLine(r.workloads, r.lastFault))
	b.WriteString(r.soak.String())
	leaked := "none"
	if r.leaked != nil {
		leaked = "some (see below)"
	}
	fmt.Fprintf(&b, "nodes left by the open clients once all work was over: %d; after every client closed: %d; goroutines leaked: %s\n",
		len(r.orphans), len(r.leftovers), leaked)
	b.WriteString(r.found.report(r.version))
	fmt.Fprintf(&b, "violations: %d\n", r.found.violations())
	if r.found.known != "" && len(r.found.losses) > 0 {
		b.WriteString("  (the recipes' failures only; the server data loss above is not counted)\n")
	}
	for i, p := range r.problems {
		if i == 20 {
			fmt.Fprintf(&b, "  ... and %d more\n", len(r.problems)-i)
			break
		}
		fmt.Fprintf(&b, "  %s\n", p)
	}
	return b.String()
}

// sortedCounts prints counts by name as "name: n, ...", in name order.
func sortedCounts(counts map[string]int) string {
	var fs []string
	for k, n := range counts {
		fs = append(fs, fmt.Sprintf("%s: %d", k, n))
	}
	slices.Sort(fs)
	return strings.Join(fs, ", ")
}
