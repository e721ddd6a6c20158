package partition

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// minMoves is the fewest items whose owner must change from before to any
// balanced assignment over members: every item of a member that left, and every
// item a remaining member owns beyond its new share. The ⌈I/M⌉ shares go to the
// members that own most, which keeps the most in place.
func minMoves(before map[string]string, members []string) int {
	owned := map[string]int{}
	for _, m := range before {
		owned[m]++
	}
	var counts []int
	for _, m := range unique(members) {
		counts = append(counts, owned[m])
	}
	slices.Sort(counts)
	slices.Reverse(counts)
	floor, extra := len(before)/len(counts), len(before)%len(counts)
	kept := 0
	for i, c := range counts {
		share := floor
		if i < extra {
			share++
		}
		kept += min(c, share)
	}
	return len(before) - kept
}

func moved(before, after map[string]string) int {
	n := 0
	for it, m := range before {
		if after[it] != m {
			n++
		}
	}
	return n
}

func names(prefix string, n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return s
}

// checkBalanced fails unless every item has one owner among members, and each
// member owns ⌊I/M⌋ or ⌈I/M⌉.
func checkBalanced(t *testing.T, owners map[string]string, items, members []string) {
	t.Helper()
	require.Len(t, owners, len(items))
	count := map[string]int{}
	for _, it := range items {
		m, ok := owners[it]
		require.True(t, ok, "item %s has no owner", it)
		require.Contains(t, members, m)
		count[m]++
	}
	floor := len(items) / len(members)
	for _, m := range members {
		require.True(t, count[m] == floor || (count[m] == floor+1 && len(items)%len(members) > 0),
			"member %s owns %d of %d items over %d members", m, count[m], len(items), len(members))
	}
}

func TestAssignIsBalancedWhateverTheCurrentOwners(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for range 500 {
		items := names("job", rng.IntN(60))
		members := names("host", 1+rng.IntN(12))
		// Owners as a member may see them mid-handover: some items free, some held
		// by members that left, some members over any share.
		current := map[string]string{}
		for _, it := range items {
			if rng.IntN(4) > 0 {
				current[it] = fmt.Sprintf("host-%d", rng.IntN(len(members)+3))
			}
		}
		checkBalanced(t, Assign(items, members, current), items, members)
	}
}

func TestAssignIsDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	items, members := names("job", 40), names("host", 7)
	current := Assign(items[:30], members[:5], nil)
	want := Assign(items, members, current)
	for range 20 {
		// Another process lists the same names in its own order, some twice.
		its := append(slices.Clone(items), items[:5]...)
		ms := append(slices.Clone(members), members[2])
		rng.Shuffle(len(its), func(i, j int) { its[i], its[j] = its[j], its[i] })
		rng.Shuffle(len(ms), func(i, j int) { ms[i], ms[j] = ms[j], ms[i] })
		require.Equal(t, want, Assign(its, ms, maps.Clone(current)))
	}
	require.Empty(t, Assign(items, nil, current), "no members, no owners")
	require.Empty(t, Assign(nil, members, current))
}

func TestAssignKeepsASettledAssignment(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for range 200 {
		items, members := names("job", rng.IntN(50)), names("host", 1+rng.IntN(10))
		settled := Assign(items, members, nil)
		require.Equal(t, settled, Assign(items, members, settled))
	}
}

// One member joins or leaves a settled assignment, over many random memberships:
// the items that move are exactly as few as any balanced assignment allows. The same
// rule without the current owners (rendezvous hashing capped for balance alone)
// moves more, which is why Assign takes them; both figures are logged.
func TestAssignMovesTheFewest(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	type tally struct{ moved, fewest int }
	var sticky, stateless [2]tally // join, leave
	var worstStateless [2]float64
	runs := 1000
	if raceEnabled { // twenty times slower, and the race detector has nothing to find here
		runs = 100
	}
	for range runs {
		items := names(fmt.Sprintf("job%d", rng.IntN(1000)), 1+rng.IntN(200))
		all := names(fmt.Sprintf("host%d", rng.IntN(1000)), 2+rng.IntN(50))
		gone := rng.IntN(len(all))
		fewer := slices.Delete(slices.Clone(all), gone, gone+1)
		for kind, change := range [2][2][]string{{fewer, all}, {all, fewer}} {
			from, to := change[0], change[1]
			before := Assign(items, from, nil)
			after := Assign(items, to, before)
			checkBalanced(t, after, items, to)
			n, fewest := moved(before, after), minMoves(before, to)
			require.Equal(t, fewest, n, "%d items, %d -> %d members", len(items), len(from), len(to))
			sticky[kind].moved += n
			sticky[kind].fewest += fewest

			n = moved(before, Assign(items, to, nil))
			stateless[kind].moved += n
			stateless[kind].fewest += fewest
			if fewest > 0 {
				worstStateless[kind] = max(worstStateless[kind], float64(n)/float64(fewest))
			}
		}
	}
	for kind, name := range []string{"join", "leave"} {
		t.Logf("%s, %d runs, 1-200 items, 1-51 members: Assign moved %d items, the fewest possible %d (%.3fx); "+
			"rendezvous capped for balance alone moved %d (%.3fx the fewest; worst single change %.1fx)",
			name, runs, sticky[kind].moved, sticky[kind].fewest, float64(sticky[kind].moved)/float64(sticky[kind].fewest),
			stateless[kind].moved, float64(stateless[kind].moved)/float64(stateless[kind].fewest), worstStateless[kind])
	}
}

// While the items of a change move one at a time (the old owner lets go, later the
// new one takes it), every member that computes the assignment from what it sees
// in between agrees on where each item goes: no item that was to stay is ever told
// to move, and none is sent two ways.
func TestAssignHoldsStillDuringAHandover(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for range 400 {
		items := names("job", 1+rng.IntN(60))
		all := names("host", 2+rng.IntN(12))
		gone := rng.IntN(len(all))
		fewer := slices.Delete(slices.Clone(all), gone, gone+1)
		from, to := fewer, all
		if rng.IntN(2) == 0 {
			from, to = all, fewer
		}
		current := Assign(items, from, nil)
		target := Assign(items, to, current)
		var moving []string
		for _, it := range items {
			if target[it] != current[it] {
				moving = append(moving, it)
			}
		}
		// Each moving item is first let go, then taken, in a random interleaving.
		steps := append(slices.Clone(moving), moving...)
		rng.Shuffle(len(steps), func(i, j int) { steps[i], steps[j] = steps[j], steps[i] })
		released := map[string]bool{}
		for _, it := range steps {
			if !released[it] {
				released[it] = true
				delete(current, it)
			} else {
				current[it] = target[it]
			}
			require.Equal(t, target, Assign(items, to, current), "mid-handover, %d -> %d members", len(from), len(to))
		}
	}
}
