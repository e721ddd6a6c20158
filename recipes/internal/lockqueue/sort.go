package lockqueue

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// Rule decides, from the participants in queue order, whether the one at index ours
// holds; if it does not, watch is the index of the single node it must wait on, one
// before ours, or -1 if the rule names none. A rule looks at no participant after
// ours, only at how many there are: decide leaves those unsorted.
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
	seq, _, ok := sequence(child, names)
	return seq, ok
}

// sequence is Sequence with the number. A sequence is exactly what the server writes,
// a signed 32-bit counter formatted as %010d: "0000000007", "-000000001",
// "-2147483648". Anything else after the name (too short, too long, a sign, a
// letter) is not the server's.
func sequence(child string, names []string) (string, int32, bool) {
	for _, name := range names {
		i := strings.LastIndex(child, name)
		if i < 0 {
			continue
		}
		seq := child[i+len(name):]
		if n, ok := serverSequence(seq); ok {
			return seq, n, true
		}
	}
	return "", 0, false
}

// serverSequence parses seq if it is exactly what %010d makes of an int32: ten
// digits for a non-negative number, a minus and nine digits (zero-padded) for a
// small negative one, a minus and ten digits without a leading zero for a large
// one. Every listing parses every child, so this allocates nothing.
func serverSequence(seq string) (int32, bool) {
	negative := len(seq) > 0 && seq[0] == '-'
	digits := seq
	if negative {
		digits = seq[1:]
	}
	if len(seq) != 10 && !(len(seq) == 11 && negative && digits[0] != '0') {
		return 0, false
	}
	// By hand: strconv.ParseInt was a fifth of decide's time in a profile of the
	// bench's 32 sessions.
	var n int64
	for i := range len(digits) {
		d := digits[i] - '0'
		if d > 9 {
			return 0, false
		}
		n = n*10 + int64(d)
	}
	if negative {
		n = -n
	}
	if n < math.MinInt32 || n > math.MaxInt32 || (n == 0 && negative) { // "-000000000" is no number's
		return 0, false
	}
	return int32(n), true
}

// SortChildren keeps the children that are participants and orders them by
// sequence, that is in the order the server made them. The server's counter (the
// parent's cversion, which every create and delete of a child moves) wraps from
// 2147483647 to -2147483648, so sequences compare as serial numbers (RFC 1982): a
// comes before b when b is less than 2^31 steps ahead of a. That is the creation
// order as long as no participant outlives 2^31 changes of its lock path.
//
// Up to the wrap this is Curator's order, which compares the sequence texts, so Go
// and Java participants agree on the queue. Past it Curator's order is not the
// creation order: a negative sequence sorts before every positive one, and among
// negatives of one width the newest sorts first, so a newcomer can take a lock that
// is held. We do not copy that.
//
// The sort is stable, as Curator's, for the one case of equal sequences: a read lock
// taken under the same sequence as its write lock, two nodes of one participant.
func SortChildren(children []string, names []string) []string {
	entries := participants(make([]entry, 0, len(children)), children, names)
	sortEntries(entries)
	return entryNames(entries)
}

// Order is SortChildren with the rule's verdict on each participant: whether it
// holds, as a participant at that place would decide for itself. Tools that show a
// queue (Queue.Participants, the public participants package, zkr inspect) call it,
// so they can never name another holder than the one the recipe granted.
func Order(children []string, names []string, rule Rule) (sorted []string, holds []bool) {
	sorted = SortChildren(children, names)
	holds = make([]bool, len(sorted))
	for i := range sorted {
		holds[i], _ = rule(sorted, i)
	}
	return sorted, holds
}

// entry is a participant in a listing.
type entry struct {
	name string
	seq  int32
	at   int // the place in children, which keeps the sort stable
}

// participants appends the participants among children to entries.
func participants(entries []entry, children []string, names []string) []entry {
	entries = slices.Grow(entries, len(children))
	for i, c := range children {
		if _, seq, ok := sequence(c, names); ok {
			entries = append(entries, entry{c, seq, i})
		}
	}
	return entries
}

// compare is the queue order: a.seq - b.seq wraps round, as the counter does, and
// ties go by place, a stable sort without the cost of one.
func compare(a, b entry) int {
	return cmp.Or(cmp.Compare(a.seq-b.seq, 0), cmp.Compare(a.at, b.at))
}

func sortEntries(entries []entry) { slices.SortFunc(entries, compare) }

// spread is how far apart the participants' sequences lie, measured from ours
// round the counter's circle.
func spread(entries []entry, mine entry) int64 {
	var lo, hi int64
	for _, e := range entries {
		d := int64(e.seq - mine.seq)
		lo, hi = min(lo, d), max(hi, d)
	}
	return hi - lo
}

func entryNames(entries []entry) []string {
	sorted := make([]string, len(entries))
	for i, e := range entries {
		sorted[i] = e.name
	}
	return sorted
}

// decide asks rule about our node in a listing of the lock path: whether it holds,
// and if not, the name of the one node to watch ("" if the rule names none) and
// whether that node is the first in a plain queue: every child a participant, their
// sequences in creation order (no wrap between them). Then its end will likely let us
// hold (see Queue.wait). It returns ErrNodeGone when our node is not among the
// participants listed.
//
// Only the participants before ours are sorted, since the rule looks at no other.
// Every wake-up of every waiter decides: with a full sort, decide took 37% of the
// bench's CPU while a thousand waiters queued on one session, most of it sorting;
// 17% this way.
func decide(children []string, names []string, ours string, rule Rule) (holds bool, watch string, first bool, err error) {
	// Most listings are short: their entries then stay on the stack (1 KB of it).
	// On the heap, 32 waiters' were 2 KB of every contended acquisition's 17
	// (BenchmarkContendedAcquisition/off-32, 2026-12-06).
	var short [32]entry
	entries := participants(short[:0], children, names)
	me := slices.IndexFunc(entries, func(e entry) bool { return e.name == ours })
	if me < 0 {
		return false, "", false, ErrNodeGone
	}
	mine := entries[me]
	var before int
	ordered := spread(entries, mine) < 1<<31
	if ordered {
		// The order is a total one: those before ours to the front, ours next, the rest
		// after in any order.
		for i, e := range entries {
			if compare(e, mine) < 0 {
				entries[before], entries[i] = entries[i], entries[before]
				before++
			}
		}
		i := slices.IndexFunc(entries[before:], func(e entry) bool { return e.at == mine.at })
		entries[before], entries[before+i] = entries[before+i], entries[before]
		sortEntries(entries[:before])
	} else {
		// Sequences more than half the counter apart are no creation order, and their
		// comparison is not transitive: ours is wherever the full sort puts it.
		sortEntries(entries)
		before = slices.IndexFunc(entries, func(e entry) bool { return e.at == mine.at })
	}
	sorted := entryNames(entries)
	holds, w := rule(sorted, before)
	if holds || w < 0 {
		return holds, "", false, nil
	}
	return false, sorted[w], w == 0 && ordered && len(entries) == len(children), nil
}
