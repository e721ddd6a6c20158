package lockqueue

import (
	"slices"
	"strconv"
	"strings"
)

// Rule decides, from the participants in queue order, whether the one at index ours
// holds; if it does not, watch is the index of the single node it must wait on, one
// before ours, or -1 if the rule names none.
type Rule func(sorted []string, ours int) (holds bool, watch int)

// Exclusive is the mutex rule: the first holds, everyone else watches the node
// just before it.
func Exclusive(sorted []string, ours int) (bool, int) { return ours == 0, ours - 1 }

// Leases lets the first n hold; the others watch the node n places before them, the
// one whose release moves them into the first n. n must be positive.
func Leases(n int) Rule {
	return func(sorted []string, ours int) (bool, int) { return ours < n, ours - n }
}

// Count lets participants hold while there are at most n of them, whatever their
// order (Curator's InterProcessSemaphoreV2); it names no node to watch, so it goes
// with Queue.WatchChildren.
func Count(n int) Rule {
	return func(sorted []string, ours int) (bool, int) { return len(sorted) <= n, -1 }
}

// ReadWrite is the read/write lock's rule. A writer is Exclusive. A reader holds
// unless a writer is before it, and then watches the nearest writer before it. A
// node is a writer if its name contains writeName, Curator's test. A participant
// named both ways therefore counts as a writer, which only ever makes others wait.
func ReadWrite(writeName string) Rule {
	isWriter := func(node string) bool { return strings.Contains(node, writeName) }
	return func(sorted []string, ours int) (bool, int) {
		if isWriter(sorted[ours]) {
			return Exclusive(sorted, ours)
		}
		for i := ours - 1; i >= 0; i-- {
			if isWriter(sorted[i]) {
				return false, i
			}
		}
		return true, -1
	}
}

// Sequence returns the sequence number the server appended to a participant's node
// (the text after the last occurrence of one of names), or false when child is not
// one of ours: a foreign node, or a malformed one, never takes part.
func Sequence(child string, names []string) (string, bool) {
	for _, name := range names {
		i := strings.LastIndex(child, name)
		if i < 0 {
			continue
		}
		seq := child[i+len(name):]
		if len(seq) >= 10 {
			if _, err := strconv.ParseInt(seq, 10, 32); err == nil && seq[0] != '+' {
				return seq, true
			}
		}
	}
	return "", false
}

// SortChildren keeps the children that are participants and orders them by
// sequence, comparing the sequence texts as Curator does, so that Go and Java
// participants agree on the queue. The sort is stable, as Curator's, for the one case
// of equal sequences (a read lock taken under the same sequence as its write lock).
func SortChildren(children []string, names []string) []string {
	type entry struct{ name, seq string }
	entries := make([]entry, 0, len(children))
	for _, c := range children {
		if seq, ok := Sequence(c, names); ok {
			entries = append(entries, entry{c, seq})
		}
	}
	slices.SortStableFunc(entries, func(a, b entry) int { return strings.Compare(a.seq, b.seq) })
	sorted := make([]string, len(entries))
	for i, e := range entries {
		sorted[i] = e.name
	}
	return sorted
}

// decide asks rule about our node in a listing of the lock path: whether it holds,
// and if not, the name of the one node to watch ("" if the rule names none). It
// returns ErrNodeGone when our node is not among the participants listed.
func decide(children []string, names []string, ours string, rule Rule) (holds bool, watch string, err error) {
	sorted := SortChildren(children, names)
	i := slices.Index(sorted, ours)
	if i < 0 {
		return false, "", ErrNodeGone
	}
	holds, w := rule(sorted, i)
	if holds || w < 0 {
		return holds, "", nil
	}
	return false, sorted[w], nil
}
