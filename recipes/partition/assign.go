package partition

import (
	"cmp"
	"container/heap"
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
//
// Its memory grows as I + M. Its time is mostly one score for each pair of an item
// that needs an owner and a member with room: I × M from nothing (1.0 to 1.25 times
// that measured, counting the items whose best member fills before their turn),
// only the moving items' after one join or leave. Figures in doc.go.
func Assign(items, members []string, current map[string]string) map[string]string {
	return assign(items, members, current, ^uint64(0))
}

// assign is Assign with every score cut to mask's bits: all of them, except in the
// test that makes ties common to check that the names break them.
func assign(items, members []string, current map[string]string, mask uint64) map[string]string {
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
			return cmp.Compare(score(items[b], members[m])&mask, score(items[a], members[m])&mask)
		})
		for _, i := range its[:min(len(its), room[m])] {
			owners[items[i]] = members[m]
			assigned[i] = true
		}
		room[m] -= min(len(its), room[m])
	}

	// The others go by rendezvous, to members with room.
	var free []int
	for i := range items {
		if !assigned[i] {
			free = append(free, i)
		}
	}
	rendezvous(items, members, free, room, mask, func(i, m int) { owners[items[i]] = members[m] })
	return owners
}

// rendezvous gives every item of free to a member with room, as if every pair
// (item, member) were sorted by score, highest first, then the lower item, then the
// lower member, and taken in that order, each giving its item to its member when the
// item has no owner yet and the member still has room. Sorting the I × M pairs is
// what cost 1.2 GB and 5.5 s at 5,000 × 2,000. Instead a heap holds one pair per
// item: its best among the members that had room when it was found. A member only
// ever loses room, so no pair of the item still to be taken sorts before that one:
// a top whose member still has room is the next pair to take; a top whose member
// has filled since is replaced by its item's best among the members with room now,
// which goes down to its place.
func rendezvous(items, members []string, free, room []int, mask uint64, give func(item, member int)) {
	open := make([]int, 0, len(members)) // the members with room, in order
	for m := range members {
		if room[m] > 0 {
			open = append(open, m)
		}
	}
	best := func(i int) pair {
		open = slices.DeleteFunc(open, func(m int) bool { return room[m] == 0 })
		ih, b := itemHash(items[i]), pair{item: i, member: -1}
		for _, m := range open { // in order: on a tie the lower member stays
			if s := scoreAt(ih, members[m]) & mask; b.member < 0 || s > b.score {
				b.score, b.member = s, m
			}
		}
		return b
	}
	next := make(pairs, len(free))
	for k, i := range free {
		next[k] = best(i)
	}
	heap.Init(&next)
	for len(next) > 0 {
		if p := next[0]; room[p.member] > 0 {
			room[p.member]--
			give(p.item, p.member)
			heap.Pop(&next)
		} else {
			next[0] = best(p.item)
			heap.Fix(&next, 0)
		}
	}
}

// pair is an item, a member and the item's score there.
type pair struct {
	score        uint64
	item, member int
}

// pairs is a heap of pairs, one per item, the first in rendezvous order at the top:
// the higher score, then the lower item (items are sorted, so their indexes order as
// their names do). The member breaks ties between pairs of one item, in best.
type pairs []pair

func (h pairs) Len() int { return len(h) }
func (h pairs) Less(i, j int) bool {
	a, b := h[i], h[j]
	return a.score > b.score || a.score == b.score && a.item < b.item
}
func (h pairs) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *pairs) Push(x any)   { *h = append(*h, x.(pair)) }
func (h *pairs) Pop() any {
	*h = (*h)[:len(*h)-1]
	return nil // read at the top before popping: nothing boxed, nothing allocated
}

// score is the rendezvous weight of item at member: FNV-1a of both names (a zero
// byte between, which no node name holds), mixed by SplitMix64's finaliser so that
// names alike in all but their last bytes still score independently.
func score(item, member string) uint64 {
	return scoreAt(itemHash(item), member)
}

// itemHash is FNV-1a's state after item and the zero byte, from which the item's
// score at every member goes on: hashed once per item, not once per pair.
func itemHash(item string) uint64 {
	return fnv1a(fnv1a(fnvOffset, item), "\x00")
}

// scoreAt is score from item's itemHash.
func scoreAt(h uint64, member string) uint64 {
	x := fnv1a(h, member)
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// FNV-1a, 64 bits (hash/fnv's New64a), written out to hash a string where it is
// without allocating a hash.Hash64 and a []byte copy per pair.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnv1a(h uint64, s string) uint64 {
	for i := range len(s) {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

// unique is names sorted, each once.
func unique(names []string) []string {
	return slices.Compact(slices.Sorted(slices.Values(names)))
}
