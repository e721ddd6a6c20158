package driver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/recipes/cache"
	"github.com/zkrecipes/zkrecipes/recipes/group"
)

// The scenarios of the cache and group recipes (issues 13 and 14). They are not in
// the default set: `-only cache-load,cache-propagation,cache-storm,group-join`.
const (
	// cacheLoad: a tree of treeFanout's shape is made (untimed), then one cache of
	// it starts; Elapsed is the time until it is initialized.
	cacheLoad kind = "cache-load"
	// cacheLoadTree: cache-load against Curator's TreeCache, which sets one-shot
	// watches, two a node, as ours must (go-zookeeper has no persistent watches);
	// cache-load's CuratorCache sets one persistent recursive watch for the tree.
	cacheLoadTree kind = "cache-load-treecache"
	// cachePropagation: a cache follows a node that another session sets Cycles
	// times, one at a time; each latency is from before the set until the cache's
	// listener hears the new version (for the limit: until the one-shot watch fires
	// and one Get returns).
	cachePropagation kind = "cache-propagation"
	// cacheStorm: a cache follows Nodes nodes while another session sets them Cycles
	// times, round robin; the run ends once the copy holds every last version.
	cacheStorm kind = "cache-storm"
	// groupJoin: a member watches the group while a second session joins Cycles new
	// members, one at a time; each latency is from the call to join until the first
	// member's view includes the new one (both views polled every pollEvery). With
	// Members > 1 the group has that many members before the joins, the watcher
	// included, each on a session of its own (members sharing a session would share
	// the server's watches on a path), and the trial's Heap is the heap the members
	// took, per member known (Members², every member knowing every member). Our
	// members never change their payload, and say so (group.FixedPayload): the others
	// then watch no member's node, as Curator's members, with one persistent
	// recursive watch, watch none.
	groupJoin kind = "group-join"
)

// treeFanout is the tree of cache-load: 10 + 100 + 9,900 nodes under its root.
var treeFanout = []int{10, 10, 99}

const pollEvery = 100 * time.Microsecond

// recipeScenarios are the cache and group scenarios; optional, so that `make bench`
// runs them only when asked.
func recipeScenarios(s Settings) []scenario {
	nodes := treeSize()
	return []scenario{{
		id: "cache-load",
		title: fmt.Sprintf("Cache initial load: a %d-node tree, 3 levels, 64 bytes a node, until initialized; "+
			"heap per node is ours after a collection, less before the load, and the peer JVM's used heap after System.gc() "+
			"with the copy, less the lower of its readings before the load and after closing the cache and its client "+
			"(either sometimes still holds a copy, the previous trial's or this one's; the close adds 2 requests)", nodes),
		work:     workload{Kind: cacheLoad},
		who:      []string{recipesName, curatorName},
		optional: true,
		metrics:  loadMetrics("cache-load", "cache", nodes),
	}, {
		id: "cache-load-treecache",
		title: fmt.Sprintf("Cache initial load against Curator's TreeCache: the tree and the measures of cache-load; "+
			"TreeCache sets a data and a child watch per node, as ours does, where CuratorCache sets one persistent "+
			"recursive watch for the whole tree (%d nodes)", nodes),
		work:     workload{Kind: cacheLoadTree},
		who:      []string{recipesName, curatorName},
		optional: true,
		metrics:  loadMetrics("cache-load-treecache", "cache vs TreeCache", nodes),
	}, {
		id:       "cache-propagation",
		title:    fmt.Sprintf("Cache propagation: another session sets a cached node %d times, until the listener hears it", s.Cycles/10),
		work:     workload{Kind: cachePropagation, Cycles: s.Cycles / 10},
		who:      []string{limitName, recipesName, curatorName},
		optional: true,
		metrics: []metric{
			latencyMetric("cache-propagation-p50", "cache propagation, p50 (µs)", 50, micros, fmtInt),
			latencyMetric("cache-propagation-p99", "cache propagation, p99 (µs)", 99, micros, fmtInt),
		},
	}, {
		id:       "cache-storm",
		title:    "Cache write storm: another session sets 50 cached nodes 1000 times, until the copy holds every last version",
		work:     workload{Kind: cacheStorm, Cycles: 1000, Nodes: 50},
		who:      []string{recipesName, curatorName},
		optional: true,
		metrics: []metric{
			{id: "cache-storm-requests", label: "cache storm: cache's requests per change", format: fmtFloat2,
				value: func(m measurement) float64 { return float64(m.Packets-int64(m.Res.Total)) / float64(m.Res.Total) }},
			{id: "cache-storm-time", label: "cache storm: until converged (ms)", format: fmtFloat1,
				value: func(m measurement) float64 { return millis(m.Res.Elapsed) }},
		},
	}, {
		id:       "group-join",
		title:    fmt.Sprintf("Group join-to-seen: %d members join one at a time, until an existing member's view has each", s.Rounds),
		work:     workload{Kind: groupJoin, Cycles: s.Rounds},
		who:      []string{recipesName, curatorName},
		optional: true,
		metrics: []metric{
			latencyMetric("group-join-p50", "group join-to-seen, p50 (ms)", 50, millis, fmtFloat2),
			latencyMetric("group-join-p99", "group join-to-seen, p99 (ms)", 99, millis, fmtFloat2),
		},
	}}
}

// loadMetrics are a load scenario's figures: time, requests and heap per node.
func loadMetrics(id, label string, nodes int) []metric {
	return []metric{
		{id: id + "-time", label: fmt.Sprintf("%s: load %d nodes (ms)", label, nodes), format: fmtFloat1,
			value: func(m measurement) float64 { return millis(m.Res.Elapsed) }},
		{id: id + "-requests", label: label + " load: requests", format: fmtInt,
			value: func(m measurement) float64 { return float64(m.Packets) }},
		{id: id + "-heap", label: label + " load: heap per cached node (bytes)", format: fmtInt,
			value: func(m measurement) float64 { return orNaN(m.Res.Heap) }},
	}
}

func orNaN(v float64) float64 {
	if v == 0 {
		return math.NaN()
	}
	return v
}

func treeSize() int { return fanoutSize(treeFanout) }

// recipeCommand is a cache or group workload as the Curator peer reads it.
func recipeCommand(w workload) (string, error) {
	switch w.Kind {
	case cacheLoad, cacheLoadTree:
		f := w.fanout()
		if len(f) != 3 {
			return "", fmt.Errorf("cache-load: the peer takes a tree of three levels, not %v", f)
		}
		return fmt.Sprintf("%s %s %d %d %d", w.Kind, w.Path, f[0], f[1], f[2]), nil
	case cachePropagation:
		return fmt.Sprintf("%s %s %d", w.Kind, w.Path, w.Cycles), nil
	case groupJoin:
		return fmt.Sprintf("%s %s %d %d", w.Kind, w.Path, w.Cycles, max(w.Members, 1)), nil
	case cacheStorm:
		return fmt.Sprintf("cache-storm %s %d %d", w.Path, w.Nodes, w.Cycles), nil
	}
	return discoveryCommand(w)
}

// recipeTrial is one prepared cache or group workload of a Go contender: the limit
// (raw go-zookeeper, propagation only) or zkrecipes.
type recipeTrial struct {
	w      workload
	limit  bool
	admin  *zk.Conn // the writer: a plain session, as a user's other process would be
	reader *zk.Conn // the limit's reader
	s      *recipesSession
	joiner *recipesSession // group-join's second session, as the peer's
	cache  *cache.Cache
	member *group.Member
	others []*group.Member // group-join's members besides the watcher
	group  []goSession     // their sessions
	heap   float64         // per member known (group-join with Members > 1)
}

// prepareRecipe prepares w when it is a cache or group workload (ok).
func (g *goContender) prepareRecipe(ctx context.Context, w workload) (t trial, ok bool, err error) {
	switch w.Kind {
	case cacheLoad, cacheLoadTree, cachePropagation, cacheStorm, groupJoin:
	default:
		return nil, false, nil
	}
	limit := g.name == limitName
	if !isRecipes(g.name) && !(limit && w.Kind == cachePropagation) {
		return nil, true, errUnsupported
	}
	rt := &recipeTrial{w: w, limit: limit}
	if err := rt.prepare(ctx, g); err != nil {
		rt.Close()
		return nil, true, err
	}
	return rt, true, nil
}

func (t *recipeTrial) prepare(ctx context.Context, g *goContender) error {
	var err error
	if t.admin, err = dialZK(ctx, g.addr); err != nil {
		return err
	}
	switch t.w.Kind {
	case cacheLoad, cacheLoadTree:
		if err := makeTree(t.admin, t.w.Path, t.w.fanout()); err != nil {
			return err
		}
	case cachePropagation:
		if err := makeTree(t.admin, t.w.Path, []int{10}); err != nil {
			return err
		}
	case cacheStorm:
		if err := makeTree(t.admin, t.w.Path, []int{t.w.Nodes}); err != nil {
			return err
		}
	}
	if t.limit {
		t.reader, err = dialZK(ctx, g.addr)
		return err
	}
	s, err := g.dial(ctx, g.addr)
	if err != nil {
		return err
	}
	t.s = s.(*recipesSession)
	switch t.w.Kind {
	case cachePropagation, cacheStorm:
		if t.cache, err = cache.New(t.s.c, t.w.Path); err != nil {
			return err
		}
		return t.cache.Start(ctx)
	case groupJoin:
		if t.member, err = group.New(t.s.c, t.w.Path, "watcher", nil, group.FixedPayload()); err != nil {
			return err
		}
		if err := t.member.Start(ctx); err != nil {
			return err
		}
		j, err := g.dial(ctx, g.addr)
		if err != nil {
			return err
		}
		t.joiner = j.(*recipesSession)
		return t.formGroup(ctx, g)
	}
	return nil
}

// formGroup makes the group Members strong and returns once every member's view has
// them all; the heap they took is measured from after their sessions connected.
func (t *recipeTrial) formGroup(ctx context.Context, g *goContender) error {
	n := t.w.Members - 1
	if n < 1 {
		return nil
	}
	var err error
	if t.group, err = g.dialAll(ctx, n); err != nil {
		return err
	}
	_, heap0 := footprint()
	t.others = make([]*group.Member, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, s := range t.group {
		if t.others[i], errs[i] = group.New(s.(*recipesSession).c, t.w.Path, fmt.Sprintf("g%d", i), nil, group.FixedPayload()); errs[i] != nil {
			continue
		}
		wg.Go(func() { errs[i] = t.others[i].Start(ctx) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("forming a group of %d: %w", t.w.Members, err)
	}
	for _, m := range append([]*group.Member{t.member}, t.others...) {
		if err := pollUntil(ctx, func() bool { return len(m.Members()) == t.w.Members }); err != nil {
			return fmt.Errorf("waiting for every member to see %d: %w", t.w.Members, err)
		}
	}
	_, heap1 := footprint()
	t.heap = (float64(heap1) - float64(heap0)) / float64(t.w.Members*t.w.Members)
	return nil
}

func (t *recipeTrial) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for _, m := range append([]*group.Member{t.member}, t.others...) {
		if m != nil {
			wg.Go(func() { _ = m.Close(ctx) })
		}
	}
	wg.Wait()
	closeAll(t.group)
	if t.cache != nil {
		_ = t.cache.Close(context.Background())
	}
	for _, c := range []*zk.Conn{t.admin, t.reader} {
		if c != nil {
			c.Close()
		}
	}
	for _, s := range []*recipesSession{t.joiner, t.s} {
		if s != nil {
			s.Close()
		}
	}
}

func (t *recipeTrial) Run(ctx context.Context, _ func(context.Context) error) (result, error) {
	switch t.w.Kind {
	case cacheLoad, cacheLoadTree:
		return t.load(ctx)
	case cachePropagation:
		if t.limit {
			return t.propagateLimit(ctx)
		}
		return t.propagate(ctx)
	case cacheStorm:
		return t.storm(ctx)
	case groupJoin:
		return t.join(ctx)
	}
	return result{}, errUnsupported
}

func (t *recipeTrial) load(ctx context.Context) (result, error) {
	_, heap0 := footprint()
	start := time.Now()
	var err error
	if t.cache, err = cache.New(t.s.c, t.w.Path); err != nil {
		return result{}, err
	}
	if err := t.cache.Start(ctx); err != nil {
		return result{}, err
	}
	elapsed := time.Since(start)
	_, heap1 := footprint()
	n := t.cache.Len()
	if want := fanoutSize(t.w.fanout()) + 1; n != want {
		return result{}, fmt.Errorf("the cache holds %d nodes, not %d", n, want)
	}
	return result{Ops: n, Total: n, Elapsed: elapsed, Heap: (float64(heap1) - float64(heap0)) / float64(n)}, nil
}

// propagate sets the first child again and again; the listener says which version
// it heard.
func (t *recipeTrial) propagate(ctx context.Context) (result, error) {
	p := path.Join(t.w.Path, "n0")
	heard := make(chan int32, 64)
	stop := t.cache.Listen(func(e cache.Event) {
		if e.Type == cache.Changed && e.Path == p {
			select {
			case heard <- e.New.Stat.Version:
			default:
			}
		}
	})
	defer stop()
	lat := make([]time.Duration, t.w.Cycles)
	start := time.Now()
	for i := range lat {
		t0 := time.Now()
		st, err := t.admin.Set(p, []byte(fmt.Sprint(i)), -1)
		if err != nil {
			return result{}, err
		}
		for {
			select {
			case v := <-heard:
				if v < st.Version {
					continue
				}
			case <-ctx.Done():
				return result{}, ctx.Err()
			}
			break
		}
		lat[i] = time.Since(t0)
	}
	n := len(lat)
	return result{Ops: n, Total: n, Elapsed: time.Since(start), Latencies: lat}, nil
}

// propagateLimit is the least any cache can do: a watch set before the write, the
// write, the notification, one read.
func (t *recipeTrial) propagateLimit(ctx context.Context) (result, error) {
	p := path.Join(t.w.Path, "n0")
	lat := make([]time.Duration, t.w.Cycles)
	start := time.Now()
	for i := range lat {
		_, _, watch, err := t.reader.GetW(p)
		if err != nil {
			return result{}, err
		}
		t0 := time.Now()
		if _, err := t.admin.Set(p, []byte(fmt.Sprint(i)), -1); err != nil {
			return result{}, err
		}
		select {
		case <-watch:
		case <-ctx.Done():
			return result{}, ctx.Err()
		}
		if _, _, err := t.reader.Get(p); err != nil {
			return result{}, err
		}
		lat[i] = time.Since(t0)
	}
	n := len(lat)
	return result{Ops: n, Total: n, Elapsed: time.Since(start), Latencies: lat}, nil
}

func (t *recipeTrial) storm(ctx context.Context) (result, error) {
	last := make(map[string]int32, t.w.Nodes)
	start := time.Now()
	for i := range t.w.Cycles {
		p := path.Join(t.w.Path, fmt.Sprintf("n%d", i%t.w.Nodes))
		st, err := t.admin.Set(p, []byte(fmt.Sprint(i)), -1)
		if err != nil {
			return result{}, err
		}
		last[p] = st.Version
	}
	err := pollUntil(ctx, func() bool {
		for p, v := range last {
			if n, ok := t.cache.Get(p); !ok || n.Stat.Version != v {
				return false
			}
		}
		return true
	})
	return result{Ops: t.w.Cycles, Total: t.w.Cycles, Elapsed: time.Since(start)}, err
}

// join: a second session joins a new member at a time (its Start runs meanwhile),
// until the watcher's view has it, then the new member leaves again, untimed.
func (t *recipeTrial) join(ctx context.Context) (result, error) {
	lat := make([]time.Duration, t.w.Cycles)
	start := time.Now()
	for i := range lat {
		id := fmt.Sprintf("m%d", i)
		t0 := time.Now()
		m, err := group.New(t.joiner.c, t.w.Path, id, nil, group.FixedPayload())
		if err != nil {
			return result{}, err
		}
		started := make(chan error, 1)
		go func() { started <- m.Start(ctx) }()
		seen := func() bool { _, ok := t.member.Members()[id]; return ok }
		err = pollUntil(ctx, seen)
		lat[i] = time.Since(t0)
		err = errors.Join(err, <-started, m.Close(ctx))
		if err == nil {
			err = pollUntil(ctx, func() bool { return !seen() })
		}
		if err != nil {
			return result{}, err
		}
	}
	n := len(lat)
	return result{Ops: n, Total: n, Elapsed: time.Since(start), Latencies: lat, Heap: t.heap, Changer: t.joiner.c.SessionID()}, nil
}

// pollUntil polls done every pollEvery: the group has no per-member event in
// Curator, so both contenders are watched alike.
func pollUntil(ctx context.Context, done func() bool) error {
	for !done() {
		select {
		case <-time.After(pollEvery):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// makeTree makes root and, below it, fanout[0] children n0.., each with fanout[1]
// children, and so on, each holding 64 bytes, in multi-requests of a few hundred.
func makeTree(conn *zk.Conn, root string, fanout []int) error {
	data := make([]byte, 64)
	var batch []any
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		_, err := conn.Multi(batch...)
		batch = batch[:0]
		return err
	}
	level := []string{root}
	for _, f := range fanout {
		var next []string
		for _, parent := range level {
			for i := range f {
				p := path.Join(parent, fmt.Sprintf("n%d", i))
				batch = append(batch, &zk.CreateRequest{Path: p, Data: data, Acl: openACL})
				next = append(next, p)
				if len(batch) == 500 {
					if err := flush(); err != nil {
						return fmt.Errorf("making the tree: %w", err)
					}
				}
			}
		}
		if err := flush(); err != nil {
			return fmt.Errorf("making the tree: %w", err)
		}
		level = next
	}
	return nil
}

// recipeGoals adds issue 13's targets (check is Report.goals's).
func recipeGoals(check func(text string, ids []string, ok func(rw row) (float64, bool), show func(id string, v float64) string)) {
	curators := func(id string, v float64) string {
		return fmt.Sprintf("%.2f× Curator's (%s)", v, strings.TrimPrefix(id, "cache-load-"))
	}
	check("cache initial load and heap per node ≤ 0.7× Curator's CuratorCache", []string{"cache-load-time", "cache-load-heap"},
		func(rw row) (float64, bool) { v := rw.ratio(recipesName, curatorName); return v, v <= 0.7 }, curators)
	check("cache initial load and heap per node ≤ 0.7× Curator's TreeCache", []string{"cache-load-treecache-time", "cache-load-treecache-heap"},
		func(rw row) (float64, bool) { v := rw.ratio(recipesName, curatorName); return v, v <= 0.7 }, curators)
	check("cache propagation p50 ≤ 1.1× one watch notification plus one read (the limit)", []string{"cache-propagation-p50"},
		func(rw row) (float64, bool) { v := rw.ratio(recipesName, limitName); return v, v <= 1.1 },
		func(_ string, v float64) string { return fmt.Sprintf("%.2f× the limit's p50", v) })
}

// cached is the version of the node at p in the trial's cache, and whether it has
// it (scaleRun.cacheChanges).
func (t *recipeTrial) cached(p string) (int32, bool) {
	if t.cache == nil {
		return 0, false
	}
	n, ok := t.cache.Get(p)
	if !ok {
		return 0, false
	}
	return n.Stat.Version, true
}
