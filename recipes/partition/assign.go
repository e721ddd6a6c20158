package partition

import (
	"cmp"
	"hash/fnv"
	"slices"
)

// Assign gives every item one owner among members, the same in every process that
// passes the same arguments, whatever their order (duplicates count once):
//
//   - balanced: each member owns ⌊I/M⌋ or ⌈I/M⌉ of the I items;
//   - sticky: an item stays with its current owner (current maps item to member)
//     while that owner is a member and within its share, so a join or a leave moves
//     exactly the fewest items any balanced assignment could;
//   - the rest by rendezvous hashing: each (item, member) pair has a score, a hash of
//     the two names; the pairs are taken from the highest score down, and a pair
//     gives its item to its member when the item has no owner yet and the member has
//     room.
//
// The ⌈I/M⌉ shares go first to the members that own as many now, then to the lower
// names; a member over its share keeps the items
// it scores highest. With no members, nothing has an owner. See doc.go for why the
// current owners are an argument, and the figures.
func Assign(items, members []string, current map[string]string) map[string]string {
	items, members = unique(items), unique(members)
	owners := make(map[string]string, len(items))
	if len(members) == 0 {
		return owners
	}

	// What each member owns now, among these items.
	index := make(map[string]int, len(members))
	for m, name := range members {
		index[name] = m
	}
	owned := make([][]int, len(members))
	for i, it := range items {
		if m, ok := index[current[it]]; ok {
			owned[m] = append(owned[m], i)
		}
	}

	// Shares: ⌈I/M⌉ first to the members that own that many already, so that as few
	// items as possible move, then to the lower names. Counting no further keeps the
	// shares where they are while items are handed over one at a time.
	floor, extra := len(items)/len(members), len(items)%len(members)
	byOwned := make([]int, len(members))
	for m := range byOwned {
		byOwned[m] = m
	}
	full := func(m int) bool { return extra > 0 && len(owned[m]) > floor }
	slices.SortStableFunc(byOwned, func(a, b int) int {
		switch {
		case full(a) && !full(b):
			return -1
		case full(b) && !full(a):
			return 1
		}
		return 0
	})
	room := make([]int, len(members))
	for rank, m := range byOwned {
		room[m] = floor
		if rank < extra {
			room[m]++
		}
	}

	// Owners keep what fits in their share, the items they score highest first.
	assigned := make([]bool, len(items))
	for m, its := range owned {
		slices.SortStableFunc(its, func(a, b int) int {
			return cmp.Compare(score(items[b], members[m]), score(items[a], members[m]))
		})
		for _, i := range its[:min(len(its), room[m])] {
			owners[items[i]] = members[m]
			assigned[i] = true
		}
		room[m] -= min(len(its), room[m])
	}

	// The others go by rendezvous, to members with room.
	type pair struct {
		score        uint64
		item, member int
	}
	var pairs []pair
	for i, it := range items {
		if assigned[i] {
			continue
		}
		for m, mb := range members {
			if room[m] > 0 {
				pairs = append(pairs, pair{score(it, mb), i, m})
			}
		}
	}
	// Names break ties, so that the order is total: items and members are sorted,
	// so their indexes order as their names do.
	slices.SortFunc(pairs, func(a, b pair) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.item, b.item), cmp.Compare(a.member, b.member))
	})
	for _, p := range pairs {
		if assigned[p.item] || room[p.member] == 0 {
			continue
		}
		room[p.member]--
		assigned[p.item] = true
		owners[items[p.item]] = members[p.member]
	}
	return owners
}

// score is the rendezvous weight of item at member: FNV-1a of both names (a zero
// byte between, which no node name holds), mixed by SplitMix64's finaliser so that
// names alike in all but their last bytes still score independently.
func score(item, member string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(item))
	h.Write([]byte{0})
	h.Write([]byte(member))
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// unique is names sorted, each once.
func unique(names []string) []string {
	return slices.Compact(slices.Sorted(slices.Values(names)))
}
