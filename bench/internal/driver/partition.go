package driver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/partition"
)

// The partition scenarios (issue 15): Items items shared by Members members, each
// in a session of its own, whose membership changes Rounds times; each change is
// measured from the moment it is made until every item runs again, on exactly one
// member, the shares balanced, and nothing has moved for partitionQuiet. A round is
// the measured change and one that restores the number of members (unmeasured):
//   - partitionJoin: a member joins; then a member leaves;
//   - partitionLeave: a member leaves gracefully; then a new one joins;
//   - partitionLoss: a member's session is closed under it (its client closed
//     without leaving: the server deletes its ephemeral nodes as at an expiry, with
//     the session timeout's wait left out, which is the same for everyone); then a
//     new one joins.
//
// The member that leaves or is lost is picked at random, the same sequence for every
// contender. Its items count as stopped from the moment of the change.
const (
	partitionJoin  kind = "partition-join"
	partitionLeave kind = "partition-leave"
	partitionLoss  kind = "partition-loss"
)

// The partition scenarios' sizes and settling.
const (
	partitionItems   = 24
	partitionMembers = 4
	// partitionQuiet is how long nothing may move once every item runs before a
	// change counts as over.
	partitionQuiet = 300 * time.Millisecond
	// kazooTimeBoundary is what kazoo's SetPartitioner is given as its
	// time_boundary: how long its party must stay unchanged before it allocates. Its
	// default is 30 s; a tenth of a second is the least that still lets a change
	// settle, and the most favourable to it.
	kazooTimeBoundary = 100 * time.Millisecond
)

// partitionRounds is how many changes a trial measures.
func partitionRounds(s Settings) int { return max(1, s.Rounds/10) }

func partitionScenarios(s Settings) []scenario {
	rounds := partitionRounds(s)
	var list []scenario
	for _, sc := range []struct {
		kind          kind
		name, verb    string
		before, after int // members; the one that leaves is the last
		restore       string
	}{
		{partitionJoin, "join", "a member joins", partitionMembers, partitionMembers + 1, "a member picked at random leaves"},
		{partitionLeave, "leave", "a member picked at random leaves gracefully", partitionMembers, partitionMembers - 1, "a new member joins"},
		{partitionLoss, "loss", "a member picked at random loses its session (its client is closed without leaving)",
			partitionMembers, partitionMembers - 1, "a new member joins"},
	} {
		id := "partition-" + sc.name
		fewest := fewestMoves(balancedOwners(partitionItems, sc.before), memberIDs(sc.after, 0), partitionItems)
		list = append(list, scenario{
			id: id,
			title: fmt.Sprintf("Partition %s: %d items over %d members, each its own session; %s, %d times, each measured from the "+
				"change until every item runs again on exactly one member with balanced shares and nothing has moved for %v; "+
				"then %s (unmeasured); kazoo's SetPartitioner with time_boundary %v (its default is 30 s)",
				sc.name, partitionItems, partitionMembers, sc.verb, rounds, partitionQuiet, sc.restore, kazooTimeBoundary),
			work:     workload{Kind: sc.kind, Items: partitionItems, Members: partitionMembers, Rounds: rounds},
			who:      []string{recipesName, kazooName},
			optional: true,
			metrics: []metric{
				latencyMetric(id+"-p50", fmt.Sprintf("partition %s: until every item runs, p50 (ms)", sc.name), 50, millis, fmtFloat1),
				latencyMetric(id+"-p99", fmt.Sprintf("partition %s: until every item runs, p99 (ms)", sc.name), 99, millis, fmtFloat1),
				perChange(id+"-moved", fmt.Sprintf("partition %s: items moved (fewest possible: %d)", sc.name, fewest), fmtFloat1,
					func(r result) float64 { return float64(r.Moved) }),
				{id: id + "-moved-ratio", label: fmt.Sprintf("partition %s: items moved ÷ the fewest possible", sc.name), format: fmtFloat2,
					value: func(m measurement) float64 { return float64(m.Res.Moved) / float64(m.Res.Fewest) }},
				perChange(id+"-paused", fmt.Sprintf("partition %s: items paused that did not move", sc.name), fmtFloat1,
					func(r result) float64 { return float64(r.PausedUnmoved) }),
				perChange(id+"-requests", fmt.Sprintf("partition %s: requests per change", sc.name), fmtFloat1,
					func(r result) float64 { return float64(r.Requests) }),
				perChange(id+"-lost", fmt.Sprintf("partition %s: work-seconds lost per change", sc.name), fmtFloat2,
					func(r result) float64 { return r.WorkLost.Seconds() }),
			},
		})
	}
	return list
}

// perChange is a partition figure summed over a trial's changes, per change.
func perChange(id, label string, format func(float64) string, sum func(result) float64) metric {
	return metric{id: id, label: label, format: format, value: func(m measurement) float64 {
		if m.Res.Ops == 0 {
			return 0
		}
		return sum(m.Res) / float64(m.Res.Ops)
	}}
}

// partitionGoals adds issue 15's targets (check is Report.goals's).
func partitionGoals(check func(text string, ids []string, ok func(rw row) (float64, bool), show func(id string, v float64) string)) {
	check("partition: on a join, no item that does not move pauses", []string{"partition-join-paused"},
		func(rw row) (float64, bool) { v := rw.value(recipesName); return v, v == 0 },
		func(_ string, v float64) string { return fmt.Sprintf("%.1f per join", v) })
	check("partition: items moved ≤ 1.5× the fewest possible", []string{"partition-join-moved-ratio", "partition-leave-moved-ratio", "partition-loss-moved-ratio"},
		func(rw row) (float64, bool) { v := rw.value(recipesName); return v, v <= 1.5 },
		func(id string, v float64) string {
			return fmt.Sprintf("%.2f× on a %s", v, strings.TrimSuffix(strings.TrimPrefix(id, "partition-"), "-moved-ratio"))
		})
}

// crowd is one contender's members of a partitioned set, each in a session of its
// own. Times are on the crowd's own clock, the same for its events and its changes.
type crowd interface {
	// connect opens a session for member id, untimed: a new process's start is not
	// the recipe's doing.
	connect(ctx context.Context, id string) error
	// join, leave and lose make a change and say when it was made.
	join(ctx context.Context, id string) (time.Duration, error)
	leave(ctx context.Context, id string) (time.Duration, error)
	lose(ctx context.Context, id string) (time.Duration, error)
	// events says when a member's work on an item starts and stops.
	events() <-chan itemEvent
	close()
}

type itemEvent struct {
	at      time.Duration
	member  string
	item    string
	running bool
}

// partitionTrial runs a partition workload on any crowd, and measures it.
type partitionTrial struct {
	w        workload
	crowd    crowd
	items    []string
	live     []string                   // the members, in the order they joined
	joined   int                        // members made so far, for the next one's id
	running  map[string]map[string]bool // item → the live members running its work
	rng      *rand.Rand
	requests func(context.Context) (int64, error)
}

func (t *partitionTrial) countRequests(read func(context.Context) (int64, error)) { t.requests = read }

// newPartitionTrial starts the workload's members on c and waits until they share
// the items.
func newPartitionTrial(ctx context.Context, w workload, c crowd) (*partitionTrial, error) {
	t := &partitionTrial{w: w, crowd: c, items: itemNames(w.Items), running: map[string]map[string]bool{},
		rng: rand.New(rand.NewPCG(15, 15))}
	for range w.Members {
		if _, err := t.change(ctx, "join"); err != nil {
			c.close()
			return nil, err
		}
	}
	return t, nil
}

func itemNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("item-%02d", i)
	}
	return names
}

// memberIDs are the ids of n members, numbered from first.
func memberIDs(n, first int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("m%03d", first+i)
	}
	return ids
}

func (t *partitionTrial) Close() { t.crowd.close() }

func (t *partitionTrial) Run(ctx context.Context, _ func(context.Context) error) (result, error) {
	if t.requests == nil {
		return result{}, errors.New("partition: no request counter")
	}
	measured, restore := "join", "leave"
	switch t.w.Kind {
	case partitionLeave:
		measured, restore = "leave", "join"
	case partitionLoss:
		measured, restore = "lose", "join"
	}
	var r result
	start := time.Now()
	for range t.w.Rounds {
		f, err := t.change(ctx, measured)
		if err != nil {
			return result{}, err
		}
		r.Ops++
		r.Total++
		r.Latencies = append(r.Latencies, f.settled)
		r.Moved += f.moved
		r.Fewest += f.fewest
		r.PausedUnmoved += f.pausedUnmoved
		r.WorkLost += f.workLost
		r.Requests += f.requests
		if _, err := t.change(ctx, restore); err != nil {
			return result{}, err
		}
	}
	r.Elapsed = time.Since(start)
	return r, nil
}

// changeFigures is what one change did.
type changeFigures struct {
	settled       time.Duration // from the change until the last item started again
	moved, fewest int
	pausedUnmoved int
	workLost      time.Duration
	requests      int64
}

// change makes one change ("join", "leave" or "lose") and waits until it has
// settled; with a request counter, it counts the requests from just before the
// change until the server has heard nothing more.
func (t *partitionTrial) change(ctx context.Context, what string) (changeFigures, error) {
	var f changeFigures
	var member string
	if what == "join" {
		member = memberIDs(1, t.joined)[0]
		t.joined++
		if err := t.crowd.connect(ctx, member); err != nil {
			return f, err
		}
	} else {
		member = t.live[t.rng.IntN(len(t.live))]
	}
	before := t.owners()
	var r0 int64
	if t.requests != nil {
		var err error
		if r0, err = t.requests(ctx); err != nil {
			return f, err
		}
	}
	var at time.Duration
	var err error
	switch what {
	case "join":
		at, err = t.crowd.join(ctx, member)
		t.live = append(t.live, member)
	case "leave":
		at, err = t.crowd.leave(ctx, member)
	case "lose":
		at, err = t.crowd.lose(ctx, member)
	}
	if err != nil {
		return f, fmt.Errorf("%s %s: %w", what, member, err)
	}
	if what != "join" {
		// Its items stop now, whatever it says later.
		t.live = slices.DeleteFunc(t.live, func(m string) bool { return m == member })
		for _, runners := range t.running {
			delete(runners, member)
		}
	}
	start := t.snapshot()
	log, err := t.settle(ctx)
	if err != nil {
		return f, fmt.Errorf("%s %s: %w", what, member, err)
	}
	if t.requests != nil {
		r1, err := t.stillRequests(ctx)
		if err != nil {
			return f, err
		}
		f.requests = r1 - r0
	}

	after := t.owners()
	f.fewest = fewestMoves(before, t.live, len(t.items))
	stopped := map[string]bool{}
	for _, e := range log {
		if e.at < at {
			return f, fmt.Errorf("%s %s: an event at %v, before the change at %v", what, member, e.at, at)
		}
		if e.running {
			f.settled = max(f.settled, e.at-at)
		} else if e.member == before[e.item] {
			stopped[e.item] = true
		}
	}
	for _, it := range t.items {
		switch {
		case after[it] != before[it]:
			f.moved++
		case stopped[it]:
			f.pausedUnmoved++
		}
	}
	f.workLost = workLost(start, log, at)
	return f, nil
}

// settle follows the events until every item runs on exactly one live member, the
// shares are balanced, and nothing has moved for partitionQuiet; it returns the
// events of the live members, in the order they happened.
func (t *partitionTrial) settle(ctx context.Context) ([]itemEvent, error) {
	const longest = 2 * time.Minute
	deadline := time.NewTimer(longest)
	defer deadline.Stop()
	var log []itemEvent
	quiet := time.NewTimer(partitionQuiet)
	defer quiet.Stop()
	for {
		select {
		case e, ok := <-t.crowd.events():
			if !ok {
				return nil, errors.New("the members' events ended")
			}
			if !slices.Contains(t.live, e.member) {
				continue
			}
			log = append(log, e)
			if t.running[e.item] == nil {
				t.running[e.item] = map[string]bool{}
			}
			if e.running {
				t.running[e.item][e.member] = true
			} else {
				delete(t.running[e.item], e.member)
			}
			quiet.Reset(partitionQuiet)
		case <-quiet.C:
			if t.balanced() {
				slices.SortStableFunc(log, func(a, b itemEvent) int { return cmp.Compare(a.at, b.at) })
				return log, nil
			}
			quiet.Reset(partitionQuiet)
		case <-deadline.C:
			return nil, fmt.Errorf("not settled within %v: %s", longest, t.describe())
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// balanced says whether every item runs on exactly one live member and each live
// member runs ⌊I/M⌋ or ⌈I/M⌉ of them.
func (t *partitionTrial) balanced() bool {
	if len(t.live) == 0 {
		return false
	}
	share := map[string]int{}
	for _, it := range t.items {
		if len(t.running[it]) != 1 {
			return false
		}
		for m := range t.running[it] {
			share[m]++
		}
	}
	lo := len(t.items) / len(t.live)
	hi := lo
	if len(t.items)%len(t.live) != 0 {
		hi++
	}
	for _, m := range t.live {
		if share[m] < lo || share[m] > hi {
			return false
		}
	}
	return true
}

func (t *partitionTrial) describe() string {
	var parts []string
	for _, it := range t.items {
		parts = append(parts, fmt.Sprintf("%s:%v", it, slices.Sorted(maps.Keys(t.running[it]))))
	}
	return fmt.Sprintf("members %v, items %s", t.live, strings.Join(parts, " "))
}

// owners maps each item to the one live member running it, if there is one.
func (t *partitionTrial) owners() map[string]string {
	owners := map[string]string{}
	for it, runners := range t.running {
		if len(runners) == 1 {
			for m := range runners {
				owners[it] = m
			}
		}
	}
	return owners
}

// snapshot is how many live members run each item now.
func (t *partitionTrial) snapshot() map[string]int {
	n := map[string]int{}
	for _, it := range t.items {
		n[it] = len(t.running[it])
	}
	return n
}

// workLost is the item-time from at until the last event during which no live
// member ran the item, given how many ran each at the start.
func workLost(start map[string]int, log []itemEvent, at time.Duration) time.Duration {
	runners := maps.Clone(start)
	idle := 0
	for _, n := range runners {
		if n == 0 {
			idle++
		}
	}
	var lost time.Duration
	last := at
	for _, e := range log {
		lost += time.Duration(idle) * (e.at - last)
		last = e.at
		was := runners[e.item]
		if e.running {
			runners[e.item]++
		} else {
			runners[e.item] = max(0, runners[e.item]-1)
		}
		switch {
		case was == 0 && runners[e.item] > 0:
			idle--
		case was > 0 && runners[e.item] == 0:
			idle++
		}
	}
	return lost
}

// stillRequests reads the request count until it stops moving (two readings 100 ms
// apart agree, or 2 s have gone by): the last of a change's requests may follow
// its last event.
func (t *partitionTrial) stillRequests(ctx context.Context) (int64, error) {
	return stillRequests(ctx, t.requests)
}

// stillRequests reads the request count with read until two readings 100 ms apart
// agree, or 2 s have gone by.
func stillRequests(ctx context.Context, read func(context.Context) (int64, error)) (int64, error) {
	last, err := read(ctx)
	if err != nil {
		return 0, err
	}
	for range 20 {
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		n, err := read(ctx)
		if err != nil {
			return 0, err
		}
		if n == last {
			break
		}
		last = n
	}
	return last, nil
}

// fewestMoves is the fewest items that must change owner, from before (item →
// owner) to a balanced share among members: each member keeps at most its share of
// what it had, and ⌈I/M⌉ goes to those that had the most.
func fewestMoves(before map[string]string, members []string, items int) int {
	had := map[string]int{}
	for _, m := range before {
		had[m]++
	}
	var counts []int
	for _, m := range members {
		counts = append(counts, had[m])
	}
	slices.SortFunc(counts, func(a, b int) int { return b - a })
	lo, big := items/len(members), items%len(members)
	kept := 0
	for i, c := range counts {
		share := lo
		if i < big {
			share++
		}
		kept += min(c, share)
	}
	return items - kept
}

// balancedOwners is items shared round robin among n members numbered from 0, for
// the scenarios' titles.
func balancedOwners(items, n int) map[string]string {
	ids := memberIDs(n, 0)
	owners := map[string]string{}
	for i, it := range itemNames(items) {
		owners[it] = ids[i%n]
	}
	return owners
}

// recipesCrowd is zkrecipes' partitioner, one framework.Client per member.
type recipesCrowd struct {
	g      *goContender
	path   string
	items  []string
	origin time.Time
	evs    chan itemEvent
	done   chan struct{}

	mu      sync.Mutex
	members map[string]*recipesMember
}

type recipesMember struct {
	s *recipesSession
	p *partition.Partitioner
}

func (g *goContender) preparePartition(ctx context.Context, w workload) (trial, error) {
	if g.name != recipesName {
		return nil, errUnsupported
	}
	c := &recipesCrowd{g: g, path: w.Path, items: itemNames(w.Items), origin: time.Now(),
		evs: make(chan itemEvent, 4096), done: make(chan struct{}), members: map[string]*recipesMember{}}
	return newPartitionTrial(ctx, w, c)
}

func (c *recipesCrowd) events() <-chan itemEvent { return c.evs }

func (c *recipesCrowd) now() time.Duration { return time.Since(c.origin) }

func (c *recipesCrowd) say(e itemEvent) {
	select {
	case c.evs <- e:
	case <-c.done:
	}
}

func (c *recipesCrowd) member(id string) (*recipesMember, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.members[id]
	if m == nil {
		return nil, fmt.Errorf("no member %s", id)
	}
	return m, nil
}

func (c *recipesCrowd) connect(ctx context.Context, id string) error {
	s, err := c.g.dial(ctx, c.g.addr)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.members[id] = &recipesMember{s: s.(*recipesSession)}
	c.mu.Unlock()
	return nil
}

// join starts the member's partitioner; its work says when it starts and stops.
func (c *recipesCrowd) join(ctx context.Context, id string) (time.Duration, error) {
	m, err := c.member(id)
	if err != nil {
		return 0, err
	}
	work := func(ctx context.Context, it partition.Item) error {
		c.say(itemEvent{at: c.now(), member: id, item: it.Name, running: true})
		<-ctx.Done()
		c.say(itemEvent{at: c.now(), member: id, item: it.Name})
		return nil
	}
	at := c.now()
	if m.p, err = partition.New(m.s.c, c.path, work, partition.WithID(id), partition.Items(c.items...)); err != nil {
		return at, err
	}
	return at, m.p.Start(ctx)
}

func (c *recipesCrowd) leave(ctx context.Context, id string) (time.Duration, error) {
	m, err := c.member(id)
	if err != nil {
		return 0, err
	}
	at := c.now()
	err = m.p.Close(ctx)
	m.s.Close()
	return at, err
}

// lose closes the member's client under its partitioner, then closes the
// partitioner, which has nothing left to do but stop.
func (c *recipesCrowd) lose(ctx context.Context, id string) (time.Duration, error) {
	m, err := c.member(id)
	if err != nil {
		return 0, err
	}
	at := c.now()
	m.s.Close()
	if err := m.p.Close(ctx); err != nil && !errors.Is(err, framework.ErrClosed) {
		return at, err
	}
	return at, nil
}

func (c *recipesCrowd) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c.mu.Lock()
	members := c.members
	c.members = map[string]*recipesMember{}
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, m := range members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if m.p != nil {
				_ = m.p.Close(ctx)
			}
			m.s.Close()
		}()
	}
	wg.Wait()
	close(c.done)
}
