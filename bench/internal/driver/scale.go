package driver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/recipes/partition"
)

// The scale curves (issue 28, `make bench-scale`): each recipe at sizes spanning two
// orders of magnitude, each figure divided by the unit of size (a waiter, a cached
// node, a member), so that a flat curve is a cost that grows as the size does and a
// rising one grows faster. Counts (requests, server watches, heap) do not depend on
// the machine's load; times do.

// ScaleConfig is what `make bench-scale` asks for.
type ScaleConfig struct {
	Contenders []string // zkrecipes, zkrecipes-oneshot, Curator, kazoo; default all four
	Recipes    []string // ScaleRecipes' names; default all
	Smallest   bool     // only each recipe's smallest size: the smoke run
	Sizes      []string // only these sizes, as the report labels them (10, 100); default all
	// OneShotLargest caps the one-shot contender's sizes, by recipe: it skips the
	// sizes (in units: members, instances, nodes) above it; none when absent.
	OneShotLargest map[string]int
	Note           string // said in the report's header, below what the run measured of the load
	Peer           string // directory of CuratorPeer.class
	Kazoo          string // kazoo's peer script
}

// ScaleRecipes are the recipes the curves cover, in order.
var ScaleRecipes = []string{"lock", "cache", "partition", "assign", "group", "discovery", "election"}

// ScalePoint is one contender's figures for one recipe at one size.
type ScalePoint struct {
	Recipe    string
	Contender string
	Size      int                // units: waiters, cached nodes, items × members, members, instances, candidates
	Label     string             // the size as the report shows it
	Figures   map[string]float64 // by figure id (scaleFigures)
	// Measured is when the run that measured it ended, set when runs are merged: a
	// recipe kept from an earlier run says so in the report.
	Measured time.Time `json:",omitzero"`
}

// scaleFigure is one curve of a recipe: a figure per unit of size.
type scaleFigure struct {
	recipe, id, label string
	count             bool // a count, independent of the machine's load (else a time)
}

// scaleFigures are the curves, in the report's order.
var scaleFigures = []scaleFigure{
	{"lock", "lock-watches", "server watches on the lock per waiter", true},
	{"lock", "watches", "all server watches per waiter (sessions' included)", true},
	{"lock", "requests", "requests per acquisition (queue and drain)", true},
	{"lock", "bytes", "bytes the server sent per acquisition", true},
	{"lock", "bytes-queue", "of which while the waiters queued", true},
	{"lock", "bytes-drain", "of which while the queue drained", true},
	{"lock", "heap", "client heap per waiter (bytes)", true},
	{"lock", "enqueue", "time to queue every waiter, per waiter (µs; zkrecipes only)", false},
	{"lock", "drain", "time to drain, per acquisition (µs)", false},
	{"cache", "watches", "server watches per node", true},
	{"cache", "requests", "requests per node loaded", true},
	{"cache", "bytes", "bytes the server sent per node loaded", true},
	{"cache", "change-requests", "requests per change followed (a leaf created, set, deleted), the write not counted", true},
	{"cache", "change-bytes", "bytes the server sent per change followed (the write's reply included)", true},
	{"cache", "heap", "client heap per node (bytes)", true},
	{"cache", "load", "load time per node (µs)", false},
	{"partition", "watches", "server watches per member", true},
	{"partition", "requests-join", "requests per rebalance after a join, per member", true},
	{"partition", "requests-leave", "requests per rebalance after a leave, per member", true},
	{"partition", "bytes-join", "bytes the server sent per rebalance after a join, per member", true},
	{"partition", "bytes-leave", "bytes the server sent per rebalance after a leave, per member", true},
	{"partition", "moved-join", "items moved ÷ the fewest possible, join", true},
	{"partition", "moved-leave", "items moved ÷ the fewest possible, leave", true},
	{"partition", "settle-join", "settle time after a join (ms)", false},
	{"partition", "settle-leave", "settle time after a leave (ms)", false},
	{"assign", "start", "time of one Assign from nothing, per item × member (ns)", false},
	{"assign", "join", "time of one Assign after a join, per item × member (ns)", false},
	{"assign", "bytes-start", "bytes one Assign from nothing allocates, per item + member", true},
	{"assign", "bytes-join", "bytes one Assign after a join allocates, per item + member", true},
	{"group", "watches", "server watches on the group per member", true},
	{"group", "all-watches", "all server watches per member (sessions' included)", true},
	{"group", "requests", "requests per join and leave, per member", true},
	{"group", "follower-requests", "of which the members' own (following it), per member", true},
	{"group", "changer-requests", "the joining session's requests per join and leave (it joins, loads its view, leaves)", true},
	{"group", "bytes", "bytes the server sent per join and leave, per member", true},
	{"group", "heap", "client heap per member known (bytes; every member knows every member)", true},
	{"group", "join-p50", "join-to-seen p50 (ms)", false},
	{"group", "join-p99", "join-to-seen p99 (ms)", false},
	{"discovery", "watches", "server watches on the service per instance", true},
	{"discovery", "requests", "requests per registration and unregistration seen", true},
	{"discovery", "follower-requests", "of which the provider's (following the service)", true},
	{"discovery", "changer-requests", "of which the registrar's (it registers, keeps and unregisters)", true},
	{"discovery", "bytes", "bytes the server sent per registration and unregistration", true},
	{"discovery", "heap", "provider's heap per instance known (bytes)", true},
	{"discovery", "join-p50", "register-to-seen p50 (ms)", false},
	{"discovery", "join-p99", "register-to-seen p99 (ms)", false},
	{"election", "watches", "server watches on the election per candidate", true},
	{"election", "requests", "requests per hand-over (the leave, the next leader's, the rejoin)", true},
	{"election", "bytes", "bytes the server sent per hand-over", true},
	{"election", "handover-p50", "hand-over p50 (ms)", false},
	{"election", "handover-p99", "hand-over p99 (ms)", false},
}

// lockSizes are the waiters queued on one lock, spread over at most lockSessions
// sessions (so that the curve is the lock's, not the sessions').
var lockSizes = []int{10, 100, 1000, 5000}

const lockSessions = 20

// cacheShapes are the trees cached: three levels, 1,001 to 100,010 nodes below the
// root (the Curator peer's cache-load takes three levels).
var cacheShapes = [][]int{{1, 10, 99}, {10, 10, 99}, {10, 100, 99}}

// partitionSizes are items × members.
var partitionSizes = [][2]int{{24, 4}, {200, 10}, {2000, 50}}

// assignSizes are the partitioner's assignments timed in this process, items ×
// members: the partition curve's sizes, then as many members as items, and more
// items (issue 39 saw 5,000 × 2,000 take 1.2 GB and 5.5 s when Assign sorted every
// pair; members that start together each compute it on every change they see).
var assignSizes = [][2]int{{24, 4}, {200, 10}, {2000, 50}, {2000, 2000}, {5000, 2000}}

// assignRounds are the rounds Assign is timed in at each size, each of
// assignRound at least; the figure is their median.
const (
	assignRounds = 5
	assignRound  = 100 * time.Millisecond
)

// groupSizes are the members of one group, each on a session of its own, every one
// following the group. 3,000 is not among them: at 1,000 ours had the server hold a
// million watches and this process a million copies of a member (M² for M members,
// see analysis-scale.md) in 5.5 GiB resident; nine times that is more than a 24 GiB
// machine shared with other work holds.
var groupSizes = []int{10, 30, 100, 300, 1000}

// discoverySizes are the instances of one service, followed by one provider.
var discoverySizes = []int{10, 30, 100, 300, 1000, 3000}

// electionSizes are the candidates of one election, spread over at most
// lockSessions sessions.
var electionSizes = []int{10, 30, 100, 300, 1000}

// scaleRounds are the joins (group, discovery) or hand-overs (election) timed at
// each size, one at a time.
const scaleRounds = 40

// cacheChangeRounds are the rounds of changes a loaded cache follows, each three
// changes one at a time: a new leaf created, an existing leaf set, the new leaf
// deleted.
const cacheChangeRounds = 20

// scalePeerHeapMB is the Curator peer's heap in a scale run: the largest group is a
// million members known, in a JVM.
const scalePeerHeapMB = 4096

// ScaleReport is what a scale run measured.
type ScaleReport struct {
	Commands []string // the driver's command lines, one per run merged into the report
	Date     time.Time
	Elapsed  time.Duration
	Machine  [][2]string
	Busy     float64 // share of the CPUs other processes kept busy during the run, 0 to 1
	Note     string  // ScaleConfig.Note: what the run's command knew of the machine
	Points   []ScalePoint
	Failures []string
	Skipped  []string // the points a cap left out (ScaleConfig.OneShotLargest)
}

// RunScale starts a server and the contenders and measures every recipe at every
// size. Failed points are in the report; RunScale fails only when nothing could run.
func RunScale(ctx context.Context, cfg ScaleConfig, args []string) (*ScaleReport, error) {
	started, cpu0 := time.Now(), sampleCPU()
	if len(cfg.Contenders) == 0 {
		cfg.Contenders = []string{recipesName, oneShotName, curatorName, kazooName}
	}
	if len(cfg.Recipes) == 0 {
		cfg.Recipes = ScaleRecipes
	}
	for _, r := range cfg.Recipes {
		if !slices.Contains(ScaleRecipes, r) {
			return nil, fmt.Errorf("unknown recipe %q (have %s)", r, strings.Join(ScaleRecipes, ", "))
		}
	}
	// A heap for the largest cache's tree and its watches (zktest's default is 256 MiB).
	tg, err := startTarget(ctx, 1, 1024)
	if err != nil {
		return nil, err
	}
	defer tg.Close()
	Say("ZooKeeper %s at %s", tg.version(ctx), tg.addr)
	cs, err := startContenders(ctx, Config{Contenders: cfg.Contenders, Peer: cfg.Peer, Kazoo: cfg.Kazoo, PeerHeapMB: scalePeerHeapMB}, tg.addr)
	for _, c := range cs {
		defer c.Close()
	}
	if err != nil {
		return nil, err
	}
	s := &scaleRun{tg: tg, cs: cs, smallest: cfg.Smallest, only: cfg.Sizes, oneShotLargest: cfg.OneShotLargest}
	for _, r := range cfg.Recipes {
		switch r {
		case "lock":
			s.lock(ctx)
		case "cache":
			s.cache(ctx)
		case "partition":
			s.partition(ctx)
		case "assign":
			s.assign(ctx)
		case "group":
			s.group(ctx)
		case "discovery":
			s.discovery(ctx)
		case "election":
			s.election(ctx)
		}
	}
	command := []string{"build/bench"}
	for _, a := range args {
		if a == "" {
			a = "''"
		}
		command = append(command, a)
	}
	rep := &ScaleReport{Commands: []string{strings.Join(command, " ")}, Date: time.Now().UTC(), Elapsed: time.Since(started), Machine: machine(ctx, tg, cs),
		Busy: othersBusy(cpu0, sampleCPU()), Note: cfg.Note, Points: s.points, Failures: s.failures, Skipped: s.skipped}
	if slices.Contains(cfg.Contenders, kazooName) {
		rep.Machine = append(rep.Machine, [2]string{"kazoo", kazooVersion(ctx) + " (Debian's python3-kazoo, on " + kazooPython + ")"})
	}
	return rep, ctx.Err()
}

type scaleRun struct {
	tg       *target
	cs       []contender
	smallest bool
	only     []string // ScaleConfig.Sizes
	points   []ScalePoint
	failures []string
	skipped  []string
	n        int // trials so far, for their paths

	oneShotLargest map[string]int
}

// sizes is all of them, or the first only, or those ScaleConfig.Sizes names.
func sizes[T any](s *scaleRun, all []T) []T {
	switch {
	case s.smallest:
		return all[:1]
	case len(s.only) > 0:
		return slices.DeleteFunc(slices.Clone(all), func(v T) bool { return !slices.Contains(s.only, fmt.Sprint(v)) })
	}
	return all
}

// each runs fn for every contender of who.
func (s *scaleRun) each(ctx context.Context, recipe, label string, size int, who []string, fn func(c contender, p string) (map[string]float64, error)) {
	for _, c := range s.cs {
		if !slices.Contains(who, c.Name()) || ctx.Err() != nil {
			continue
		}
		if most, ok := s.oneShotLargest[recipe]; ok && c.Name() == oneShotName && size > most {
			msg := fmt.Sprintf("%s %s, %s: above the one-shot contender's cap of %d", recipe, label, c.Name(), most)
			Say("skipped %s", msg)
			s.skipped = append(s.skipped, msg)
			continue
		}
		s.n++
		p := path.Join(s.tg.root, "scale", recipe, fmt.Sprintf("%s-%d", safe(c.Name()), s.n))
		figures, err := fn(c, p)
		if err != nil {
			msg := fmt.Sprintf("%s %s, %s: %v", recipe, label, c.Name(), err)
			Say("FAILED %s", msg)
			s.failures = append(s.failures, msg)
			continue
		}
		s.points = append(s.points, ScalePoint{Recipe: recipe, Contender: c.Name(), Size: size, Label: label, Figures: figures})
		var parts []string
		for _, f := range scaleFigures {
			if v, ok := figures[f.id]; ok && f.recipe == recipe {
				parts = append(parts, fmt.Sprintf("%s %.4g", f.id, v))
			}
		}
		Say("  %s %s %s: %s", recipe, label, c.Name(), strings.Join(parts, ", "))
	}
}

// lock queues waiters behind a holder, counts the server's watches once they all
// wait, then drains the queue: each waiter acquires once and releases.
func (s *scaleRun) lock(ctx context.Context) {
	for _, n := range sizes(s, lockSizes) {
		Say("lock queue: %d waiters", n)
		w := workload{Kind: queue, Waiters: n, Sessions: min(n, lockSessions)}
		s.each(ctx, "lock", fmt.Sprint(n), n, []string{recipesName, curatorName}, func(c contender, p string) (map[string]float64, error) {
			w.Path = p
			m, err := measure(ctx, s.tg, c, w)
			if err != nil {
				return nil, err
			}
			f := map[string]float64{
				"lock-watches": float64(m.LockWatches) / float64(n),
				"watches":      float64(m.Watches) / float64(n),
				"requests":     float64(m.Packets) / float64(m.Res.Total),
				"bytes":        float64(m.Bytes) / float64(m.Res.Total),
				"bytes-queue":  float64(m.QueueBytes) / float64(m.Res.Total),
				"bytes-drain":  float64(m.Bytes-m.QueueBytes) / float64(m.Res.Total),
				"drain":        micros(m.Res.Elapsed) / float64(m.Res.Total),
			}
			if c.InProcess() {
				// The peer says QUEUED once its threads are started, when many of its
				// waiters have queued already: only ours is timed from the start.
				f["heap"], f["enqueue"] = m.Heap, micros(m.QueueTime)/float64(n)
			}
			return f, nil
		})
	}
}

// cache loads a tree into one cache and counts its requests and, once it is loaded,
// the server's watches.
func (s *scaleRun) cache(ctx context.Context) {
	for _, shape := range sizes(s, cacheShapes) {
		n := fanoutSize(shape)
		Say("cache: %d nodes", n)
		s.each(ctx, "cache", fmt.Sprint(n), n, []string{recipesName, oneShotName, curatorName}, func(c contender, p string) (map[string]float64, error) {
			w := workload{Kind: cacheLoadTree, Path: p, Fanout: shape}
			if c.Name() == curatorName {
				w.Kind = cacheLoad // CuratorCache, Curator's own choice since 5.0
			}
			if err := s.tg.mkdirs(ctx, p); err != nil {
				return nil, err
			}
			defer func() {
				if err := s.tg.admin(context.WithoutCancel(ctx), func(conn *zk.Conn) error { return removeTree(conn, p) }); err != nil {
					Say("removing the tree at %s: %v", p, err)
				}
			}()
			t, err := c.Prepare(ctx, w)
			if err != nil {
				return nil, err
			}
			defer t.Close()
			// The writer of the changes, a plain session as a user's other process
			// would be, connected before the counts start.
			writer, err := dialZK(ctx, s.tg.addr)
			if err != nil {
				return nil, err
			}
			defer writer.Close()
			watches := -1
			var ch cacheChanged
			loaded := func(ctx context.Context) (err error) {
				if watches, _, err = s.tg.watches(ctx); err != nil {
					return err
				}
				// The peer's cache is open until it is told to count: it follows the
				// changes now, and the counts around Run less theirs are its load's.
				ch, err = s.cacheChanges(ctx, writer, p, shape, nil)
				return err
			}
			res, requests, bytes, err := s.countedRun(ctx, t, loaded, false)
			if err != nil {
				return nil, err
			}
			requests, bytes = requests-ch.requests, bytes-ch.bytes
			if watches < 0 { // a contender in this process: its cache is still open
				if watches, _, err = s.tg.watches(ctx); err != nil {
					return nil, err
				}
				f, ok := t.(interface {
					cached(path string) (version int32, ok bool)
				})
				if !ok {
					return nil, errors.New("not a cache trial")
				}
				if ch, err = s.cacheChanges(ctx, writer, p, shape, f.cached); err != nil {
					return nil, err
				}
			}
			nodes := float64(res.Total)
			return map[string]float64{
				"watches":         float64(watches) / nodes,
				"requests":        float64(requests) / nodes,
				"bytes":           float64(bytes) / nodes,
				"change-requests": float64(ch.requests-int64(ch.changes)) / float64(ch.changes),
				"change-bytes":    float64(ch.bytes) / float64(ch.changes),
				"heap":            res.Heap,
				"load":            micros(res.Elapsed) / nodes,
			}, nil
		})
	}
}

// cacheChanged is what the changes a cache followed cost: the server's requests
// (the writes included) and the bytes it sent.
type cacheChanged struct {
	changes         int
	requests, bytes int64
}

// cacheChanges makes cacheChangeRounds rounds of changes in a loaded cache's tree
// of that shape under p, one at a time, each until the cache has it (seen, for a
// cache in this process; nil for the peer's) and the server's request count has been
// still for 100 ms: a change's whole cost, apart from the next's. A round creates a
// leaf beside those of a node of the second level, sets one of them, and deletes the
// new one.
func (s *scaleRun) cacheChanges(ctx context.Context, writer *zk.Conn, p string, shape []int, seen func(string) (int32, bool)) (cacheChanged, error) {
	var ch cacheChanged
	r0, err := s.tg.requests(ctx)
	if err != nil {
		return ch, err
	}
	b0, err := s.tg.responseBytes(ctx)
	if err != nil {
		return ch, err
	}
	data := make([]byte, 64)
	for i := range cacheChangeRounds {
		parent := path.Join(p, fmt.Sprintf("n%d", i%shape[0]), fmt.Sprintf("n%d", i%shape[1]))
		leaf, old := path.Join(parent, fmt.Sprintf("x%d", i)), path.Join(parent, fmt.Sprintf("n%d", i%shape[2]))
		changes := []struct {
			path string
			do   func() (int32, error) // the version the cache must have, or -1 for none
		}{
			{leaf, func() (int32, error) { _, err := writer.Create(leaf, data, 0, openACL); return 0, err }},
			{old, func() (int32, error) { st, err := writer.Set(old, data, -1); return st.Version, err }},
			{leaf, func() (int32, error) { return -1, writer.Delete(leaf, -1) }},
		}
		for _, c := range changes {
			want, err := c.do()
			if err != nil {
				return ch, fmt.Errorf("changing %s: %w", c.path, err)
			}
			ch.changes++
			if seen != nil {
				if err := pollUntil(ctx, func() bool {
					v, ok := seen(c.path)
					return (want < 0 && !ok) || (want >= 0 && ok && v == want)
				}); err != nil {
					return ch, fmt.Errorf("waiting for the cache to have %s: %w", c.path, err)
				}
			}
			if _, err := stillRequests(ctx, s.tg.requests); err != nil {
				return ch, err
			}
		}
	}
	r1, err := s.tg.requests(ctx)
	if err != nil {
		return ch, err
	}
	b1, err := s.tg.responseBytes(ctx)
	if err != nil {
		return ch, err
	}
	// The readings' own four-letter words are not requests; the byte count was read
	// first, so the last reading's is not in it either.
	ch.requests, ch.bytes = r1-r0, b1-b0
	return ch, nil
}

// partition starts members sharing items, counts the server's watches, then makes a
// member join and one leave, each measured until it has settled.
func (s *scaleRun) partition(ctx context.Context) {
	for _, im := range sizes(s, partitionSizes) {
		items, members := im[0], im[1]
		label := fmt.Sprintf("%d×%d", items, members)
		Say("partition: %s", label)
		s.each(ctx, "partition", label, items*members, []string{recipesName, kazooName}, func(c contender, p string) (map[string]float64, error) {
			t, err := s.prepare(ctx, c, workload{Kind: partitionJoin, Path: p, Items: items, Members: members, Rounds: 1})
			if err != nil {
				return nil, err
			}
			defer t.Close()
			pt, ok := t.(*partitionTrial)
			if !ok {
				return nil, errors.New("not a partition trial")
			}
			pt.countRequests(s.tg.requests)
			watches, err := stillWatches(ctx, s.tg)
			if err != nil {
				return nil, err
			}
			f := map[string]float64{"watches": float64(watches) / float64(members)}
			for _, what := range []string{"join", "leave"} {
				b0, err := s.tg.responseBytes(ctx)
				if err != nil {
					return nil, err
				}
				cf, err := pt.change(ctx, what) // returns once the servers' request count is still
				if err != nil {
					return nil, err
				}
				b1, err := s.tg.responseBytes(ctx)
				if err != nil {
					return nil, err
				}
				f["bytes-"+what] = float64(b1-b0) / float64(len(pt.live))
				f["requests-"+what] = float64(cf.requests) / float64(len(pt.live))
				f["moved-"+what] = float64(cf.moved) / math.Max(1, float64(cf.fewest))
				f["settle-"+what] = millis(cf.settled)
			}
			return f, nil
		})
	}
}

// assign times partition.Assign in this process, without a server: from nothing
// (every item placed by rendezvous, as when the members start together) and after
// a join (a settled assignment over one member fewer, as every member computes it
// on a change), and counts the bytes each call allocates.
func (s *scaleRun) assign(ctx context.Context) {
	for _, im := range sizes(s, assignSizes) {
		items, members := numbered("item", im[0]), numbered("member", im[1])
		label := fmt.Sprintf("%d×%d", im[0], im[1])
		Say("assign: %s", label)
		s.each(ctx, "assign", label, im[0]*im[1], []string{recipesName}, func(contender, string) (map[string]float64, error) {
			f := map[string]float64{}
			settled := partition.Assign(items, members[1:], nil)
			for what, current := range map[string]map[string]string{"start": nil, "join": settled} {
				t, err := timeAssign(ctx, items, members, current)
				if err != nil {
					return nil, err
				}
				Say("    %s: %v per Assign (rounds %v to %v), %.0f bytes", what, t.median, t.fastest, t.slowest, t.bytes)
				f[what] = float64(t.median.Nanoseconds()) / float64(im[0]*im[1])
				f["bytes-"+what] = t.bytes / float64(im[0]+im[1])
			}
			return f, nil
		})
	}
}

// assignTiming is what timeAssign measured: one call's time, the median of the
// rounds and their extremes, and the bytes one call allocates.
type assignTiming struct {
	median, fastest, slowest time.Duration
	bytes                    float64
}

// timeAssign calls Assign in assignRounds rounds, each of as many calls as take
// assignRound or more (as the first call took).
func timeAssign(ctx context.Context, items, members []string, current map[string]string) (assignTiming, error) {
	start := time.Now()
	partition.Assign(items, members, current)
	calls := max(1, int(assignRound/max(time.Since(start), 1)))
	var before, after runtime.MemStats
	var rounds []time.Duration
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range assignRounds {
		if err := ctx.Err(); err != nil {
			return assignTiming{}, err
		}
		start := time.Now()
		for range calls {
			partition.Assign(items, members, current)
		}
		rounds = append(rounds, time.Since(start)/time.Duration(calls))
	}
	runtime.ReadMemStats(&after)
	slices.Sort(rounds)
	return assignTiming{median: rounds[len(rounds)/2], fastest: rounds[0], slowest: rounds[len(rounds)-1],
		bytes: float64(after.TotalAlloc-before.TotalAlloc) / float64(calls*assignRounds)}, nil
}

// numbered is n names, prefix-0 to prefix-(n-1).
func numbered(prefix string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return names
}

// prepare makes w's path and has c prepare a trial of w there.
func (s *scaleRun) prepare(ctx context.Context, c contender, w workload) (trial, error) {
	if err := s.tg.mkdirs(ctx, w.Path); err != nil {
		return nil, err
	}
	return c.Prepare(ctx, w)
}

// countedRun runs t and reads the servers' request and byte counts around the part
// it measures: from before Run, or with fromQueued from when t calls queued (once
// its participants wait), after look, if any, has looked at the server.
func (s *scaleRun) countedRun(ctx context.Context, t trial, look func(context.Context) error, fromQueued bool) (res result, requests, bytes int64, err error) {
	var r0, b0 int64
	read := func(ctx context.Context) (r, b int64, err error) {
		if b, err = s.tg.responseBytes(ctx); err != nil {
			return 0, 0, err
		}
		r, err = s.tg.requests(ctx) // after the bytes: this reading's word is not counted
		return r, b, err
	}
	if !fromQueued {
		if r0, b0, err = read(ctx); err != nil {
			return result{}, 0, 0, err
		}
	}
	queued := func(ctx context.Context) (err error) {
		if look != nil {
			if err := look(ctx); err != nil {
				return err
			}
		}
		if fromQueued {
			r0, b0, err = read(ctx)
		}
		return err
	}
	if res, err = t.Run(ctx, queued); err != nil {
		return result{}, 0, 0, err
	}
	r1, err := s.tg.requests(ctx)
	if err != nil {
		return result{}, 0, 0, err
	}
	b1, err := s.tg.responseBytes(ctx)
	if err != nil {
		return result{}, 0, 0, err
	}
	return res, r1 - r0, b1 - b0, nil
}

// joins measures a group or a discovery service once Prepare has made it: the
// server's watches (under p, per unit, and all of them), then rounds of joins,
// each until seen, with the requests and bytes they cost and their latencies.
func (s *scaleRun) joins(ctx context.Context, c contender, w workload, units int) (map[string]float64, error) {
	t, err := s.prepare(ctx, c, w)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	all, err := stillWatches(ctx, s.tg)
	if err != nil {
		return nil, err
	}
	under, err := s.tg.watchesUnder(ctx, w.Path)
	if err != nil {
		return nil, err
	}
	before, err := s.tg.sessionRequests(ctx)
	if err != nil {
		return nil, err
	}
	res, requests, bytes, err := s.countedRun(ctx, t, nil, false)
	if err != nil {
		return nil, err
	}
	after, err := s.tg.sessionRequests(ctx)
	if err != nil {
		return nil, err
	}
	c0, ok0 := before[res.Changer]
	c1, ok1 := after[res.Changer]
	if !ok0 || !ok1 {
		return nil, fmt.Errorf("the changing session %#x is not in the server's connections", res.Changer)
	}
	u, rounds := float64(units), float64(res.Total)
	return map[string]float64{
		"watches":     float64(under) / u,
		"all-watches": float64(all) / u,
		"requests":    float64(requests) / rounds,
		// The changing session's (the joiner's, the registrar's) and the others',
		// those that follow the change.
		"changer-requests":  float64(c1-c0) / rounds,
		"follower-requests": float64(requests-(c1-c0)) / rounds,
		"bytes":             float64(bytes) / rounds,
		"heap":              res.Heap,
		"join-p50":          millis(Percentile(res.Latencies, 50)),
		"join-p99":          millis(Percentile(res.Latencies, 99)),
	}, nil
}

// group makes a group of each size, every member on a session of its own and
// following the group, then joins a member at a time on another session, each until
// an existing member sees it (the -recipes group-join scenario in a larger group).
func (s *scaleRun) group(ctx context.Context) {
	for _, n := range sizes(s, groupSizes) {
		Say("group: %d members", n)
		s.each(ctx, "group", fmt.Sprint(n), n, []string{recipesName, oneShotName, curatorName}, func(c contender, p string) (map[string]float64, error) {
			f, err := s.joins(ctx, c, workload{Kind: groupJoin, Path: p, Cycles: scaleRounds, Members: n}, n)
			if err != nil {
				return nil, err
			}
			// A join and a leave reach every member: per member is flat when each costs
			// the same at every size.
			f["requests"], f["bytes"] = f["requests"]/float64(n), f["bytes"]/float64(n)
			f["follower-requests"] /= float64(n)
			return f, nil
		})
	}
}

// discovery registers each size's instances of one service, starts a provider of
// it, then registers an instance at a time, each until the provider knows it (the
// -recipes discovery-register scenario on a larger service).
func (s *scaleRun) discovery(ctx context.Context) {
	for _, n := range sizes(s, discoverySizes) {
		Say("discovery: %d instances", n)
		s.each(ctx, "discovery", fmt.Sprint(n), n, []string{recipesName, oneShotName, curatorName}, func(c contender, p string) (map[string]float64, error) {
			return s.joins(ctx, c, workload{Kind: discoveryRegister, Path: p, Cycles: scaleRounds, Nodes: n}, n)
		})
	}
}

// election puts each size's candidates in one election, spread over at most
// lockSessions sessions, counts the server's watches once they all wait, then hands
// the leadership on scaleRounds times (the -recipes handover scenario with more
// candidates): the leader leaves, the next leads, the old leader's session joins
// again at the back.
func (s *scaleRun) election(ctx context.Context) {
	for _, n := range sizes(s, electionSizes) {
		Say("election: %d candidates", n)
		s.each(ctx, "election", fmt.Sprint(n), n, []string{recipesName, curatorName}, func(c contender, p string) (map[string]float64, error) {
			t, err := s.prepare(ctx, c, workload{Kind: handover, Path: p, Rounds: scaleRounds, Members: n, Sessions: min(n, lockSessions)})
			if err != nil {
				return nil, err
			}
			defer t.Close()
			base, _, err := s.tg.watches(ctx) // the sessions' own (Curator's on /zookeeper/config)
			if err != nil {
				return nil, err
			}
			var watches int
			waiting := func(ctx context.Context) (err error) {
				// The peer's latches join in the background: every candidate but the
				// leader watches the one before it once all have joined.
				if _, _, _, err = awaitWatches(ctx, s.tg, base+n-1); err == nil {
					watches, err = s.tg.watchesUnder(ctx, p)
				}
				return err
			}
			res, requests, bytes, err := s.countedRun(ctx, t, waiting, true)
			if err != nil {
				return nil, err
			}
			return map[string]float64{
				"watches":      float64(watches) / float64(n),
				"requests":     float64(requests) / float64(res.Total),
				"bytes":        float64(bytes) / float64(res.Total),
				"handover-p50": millis(Percentile(res.Latencies, 50)),
				"handover-p99": millis(Percentile(res.Latencies, 99)),
			}, nil
		})
	}
}

// stillWatches reads wchs until two readings 200 ms apart agree (or 5 s have gone
// by): members that have just settled may still be re-arming watches.
func stillWatches(ctx context.Context, tg *target) (int, error) {
	last, _, err := tg.watches(ctx)
	if err != nil {
		return 0, err
	}
	for range 25 {
		select {
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		n, _, err := tg.watches(ctx)
		if err != nil {
			return 0, err
		}
		if n == last {
			return n, nil
		}
		last = n
	}
	return last, nil
}

// fanoutSize is how many nodes a tree of that fanout has below its root.
func fanoutSize(fanout []int) int {
	n, level := 0, 1
	for _, f := range fanout {
		level *= f
		n += level
	}
	return n
}
