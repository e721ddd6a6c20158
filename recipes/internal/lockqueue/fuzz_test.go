package lockqueue

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The fuzz targets check the code that reads a lock path's listing against a
// reference model written apart from it, as plainly as possible. A listing is given
// as the children's names joined by "/", which no node name can contain.

// nameSets are the participant names of every recipe: mutex and selector, latch,
// semaphore leases, rwlock, rwlock with Curator's names.
var nameSets = [][]string{{"lock-"}, {"latch-"}, {"lease-"}, {"read-", "write-"}, {"__READ__", "__WRIT__"}}

// serverSeq is what the server appends to a sequential node: its signed 32-bit
// counter written as %010d, so ten digits, or a minus and nine digits, or a minus
// and ten digits when the number needs them.
var serverSeq = regexp.MustCompile(`^(?:[0-9]{10}|-[0-9]{9}|-[1-9][0-9]{9})$`)

// endsWithName matches a name, then a number, at the end of a child.
var endsWithName = func() map[string]*regexp.Regexp {
	m := map[string]*regexp.Regexp{}
	for _, names := range nameSets {
		for _, name := range names {
			m[name] = regexp.MustCompile(`(?s)^.*` + regexp.QuoteMeta(name) + `(-?[0-9]+)$`)
		}
	}
	return m
}()

// modelSeq is the model's Sequence: the first of names that is followed, at the end
// of child, by a sequence the server could have written, and that number.
func modelSeq(child string, names []string) (string, int64, bool) {
	for _, name := range names {
		m := endsWithName[name].FindStringSubmatch(child)
		if m == nil || !serverSeq.MatchString(m[1]) || m[1] == "-000000000" {
			continue
		}
		n, _ := strconv.ParseInt(m[1], 10, 64) // eleven characters at most
		if math.MinInt32 <= n && n <= math.MaxInt32 {
			return m[1], n, true
		}
	}
	return "", 0, false
}

// modelOrder puts the participants of a listing in the order the server made them,
// or reports false when no order can be told. The counter runs round a circle of 2^32
// numbers, and the numbers of the nodes alive at one time lie on a short arc of it:
// the oldest is the first after the widest gap. When the nodes spread over half the
// circle or more, a node would have outlived 2^31 changes of its lock path, and
// which of two is older cannot be told. Equal numbers keep the listing's order.
func modelOrder(children, names []string) ([]string, bool) {
	type node struct {
		name string
		at   uint32 // position on the circle
	}
	var nodes []node
	for _, c := range children {
		if _, n, ok := modelSeq(c, names); ok {
			nodes = append(nodes, node{c, uint32(int32(n))})
		}
	}
	if len(nodes) == 0 {
		return nil, true
	}
	at := make([]uint64, len(nodes))
	for i, n := range nodes {
		at[i] = uint64(n.at)
	}
	slices.Sort(at)
	start, widest := at[0], at[0]+1<<32-at[len(at)-1] // the gap across the wrap
	for i := 1; i < len(at); i++ {
		if gap := at[i] - at[i-1]; gap > widest {
			start, widest = at[i], gap
		}
	}
	if 1<<32-widest >= 1<<31 {
		return nil, false
	}
	sort.SliceStable(nodes, func(i, j int) bool {
		return nodes[i].at-uint32(start) < nodes[j].at-uint32(start)
	})
	sorted := make([]string, len(nodes))
	for i, n := range nodes {
		sorted[i] = n.name
	}
	return sorted, true
}

// A rule under test, with the model of it.
type ruleCase struct {
	name  string
	names []string
	rule  Rule
	// model says whether the participant at i of order holds, else which one it
	// watches ("" for none).
	model func(order []string, i int) (bool, string)
	// safe checks a set of holders of one listing.
	safe func(holders []string, participants int) error
	// counting: the rule names no node to watch, and may let nobody hold.
	counting bool
}

func ruleCases(n int) []ruleCase {
	atMost := func(k int) func([]string, int) error {
		return func(h []string, _ int) error {
			if len(h) > k {
				return fmt.Errorf("%d holders, %d allowed", len(h), k)
			}
			return nil
		}
	}
	firstN := func(k int) func([]string, int) (bool, string) {
		return func(order []string, i int) (bool, string) {
			if i < k {
				return true, ""
			}
			return false, order[i-k]
		}
	}
	readWrite := func(read, write string) ruleCase {
		writer := func(node string) bool { return strings.Contains(node, write) }
		return ruleCase{
			name: "rwlock " + write, names: []string{read, write}, rule: ReadWrite(write),
			model: func(order []string, i int) (bool, string) {
				if writer(order[i]) {
					return firstN(1)(order, i)
				}
				for j := i - 1; j >= 0; j-- {
					if writer(order[j]) {
						return false, order[j]
					}
				}
				return true, ""
			},
			safe: func(h []string, _ int) error {
				writers := slices.IndexFunc(h, writer) >= 0
				if writers && len(h) > 1 {
					return fmt.Errorf("a writer holds with others: %q", h)
				}
				return nil
			},
		}
	}
	return []ruleCase{
		{name: "exclusive", names: []string{"lock-"}, rule: Exclusive, model: firstN(1), safe: atMost(1)},
		{name: fmt.Sprintf("leases(%d)", n), names: []string{"lock-"}, rule: Leases(n), model: firstN(n), safe: atMost(n)},
		{
			name: fmt.Sprintf("count(%d)", n), names: []string{"lease-"}, rule: Count(n), counting: true,
			model: func(order []string, _ int) (bool, string) { return len(order) <= n, "" },
			safe: func(h []string, participants int) error {
				if len(h) > 0 && (len(h) != participants || participants > n) {
					return fmt.Errorf("%d of %d hold, %d allowed", len(h), participants, n)
				}
				return nil
			},
		},
		readWrite("read-", "write-"),
		readWrite("__READ__", "__WRIT__"),
	}
}

// distinct reports whether no two participants have the same sequence, which only
// a read lock taken under its own write lock does (and a foreign node may).
func distinct(participants, names []string) bool {
	seen := map[string]bool{}
	for _, p := range participants {
		seq, _, _ := modelSeq(p, names)
		if seen[seq] {
			return false
		}
		seen[seq] = true
	}
	return true
}

// listing is the children of a listing joined by "/", in order. A listing names
// each child once, so repeats are dropped.
func listing(s string) []string {
	var children []string
	for _, c := range strings.Split(s, "/") {
		if !slices.Contains(children, c) {
			children = append(children, c)
		}
	}
	return children
}

func FuzzSequence(f *testing.F) {
	f.Add("_c_0f8fad5b-d9cb-469f-a165-70867728950e-lock-0000000007", "_c_0f8fad5b-d9cb-469f-a165-70867728950e-", int32(7))
	f.Add("lock--2147483648", "", int32(math.MinInt32))
	f.Add("0f8fad5bd9cb469fa16570867728950e__lock__0000000001", "x-write-", int32(-1))
	f.Fuzz(func(t *testing.T, child, prefix string, n int32) {
		for _, names := range nameSets {
			seq, ok := Sequence(child, names)
			wantSeq, _, wantOK := modelSeq(child, names)
			if seq != wantSeq || ok != wantOK {
				t.Fatalf("Sequence(%q, %q) = %q, %v; the model says %q, %v", child, names, seq, ok, wantSeq, wantOK)
			}
			// Whatever came before, a node the server made for us takes part, with the
			// server's number.
			for _, name := range names {
				made := prefix + name + fmt.Sprintf("%010d", n)
				if seq, ok := Sequence(made, names); !ok || seq != fmt.Sprintf("%010d", n) {
					t.Fatalf("the server's %q gives %q, %v", made, seq, ok)
				}
			}
		}
	})
}

func FuzzSortChildren(f *testing.F) {
	f.Add("lock-0000000001/lock-0000000000/garbage")
	f.Add("lock-2147483647/lock--2147483648/lock-2147483646")
	f.Fuzz(func(t *testing.T, s string) {
		children := strings.Split(s, "/") // duplicates too: SortChildren does not mind
		for _, names := range nameSets {
			sorted := SortChildren(children, names)
			want, ok := modelOrder(children, names)
			if !ok { // no creation order: still the participants, each once
				want = slices.DeleteFunc(slices.Clone(children), func(c string) bool {
					_, _, ok := modelSeq(c, names)
					return !ok
				})
				slices.Sort(want)
				sorted = slices.Sorted(slices.Values(sorted))
			}
			if !slices.Equal(sorted, want) {
				t.Fatalf("SortChildren(%q, %q) = %q; the model says %q", children, names, sorted, want)
			}
		}
	})
}

func FuzzDecide(f *testing.F) {
	f.Add("_c_0f8fad5b-d9cb-469f-a165-70867728950e-lock-0000000007/lock-0000000003/foreign", uint16(0), uint8(0), uint8(1))
	f.Add("x-read-0000000001/x-write-0000000002/x-read-0000000003", uint16(2), uint8(3), uint8(0))
	f.Fuzz(func(t *testing.T, s string, ours uint16, rule, n uint8) {
		rc := ruleCases(int(n%4) + 1)[int(rule)%5]
		children := listing(s)
		me := ""
		if len(children) > 0 {
			me = children[int(ours)%len(children)]
		}
		holds, watch, ahead, err := decide(children, rc.names, me, rc.rule)
		if _, _, ok := modelSeq(me, rc.names); !ok {
			if !errors.Is(err, ErrNodeGone) {
				t.Fatalf("%s: our node %q is no participant, yet decide says %v, %q, %v", rc.name, me, holds, watch, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("%s: decide(%q, %q): %v", rc.name, children, me, err)
		}
		sorted := SortChildren(children, rc.names)
		if !holds && !rc.counting {
			// Waiting, we watch a participant before us.
			if w := slices.Index(sorted, watch); w < 0 || w >= slices.Index(sorted, me) {
				t.Fatalf("%s: %q watches %q in %q", rc.name, me, watch, sorted)
			}
		}

		// Ahead (a hand-over on the notification may follow) only when the node we watch
		// is the first, every child is a participant, and their order is known.
		if ahead && (holds || len(sorted) != len(children) || watch != sorted[0]) {
			t.Fatalf("%s: in %q, %q is ahead watching %q", rc.name, children, me, watch)
		}

		order, known := modelOrder(children, rc.names)
		if ahead && !known {
			t.Fatalf("%s: in %q, %q is ahead, in no creation order", rc.name, children, me)
		}
		if known {
			wantHolds, wantWatch := rc.model(order, slices.Index(order, me))
			if holds != wantHolds || watch != wantWatch {
				t.Fatalf("%s: in %q, %q holds %v, watches %q; the model says %v, %q",
					rc.name, order, me, holds, watch, wantHolds, wantWatch)
			}
		}

		// Every participant deciding on this listing: the holders are within the rule,
		// and somebody holds unless the count is over. Foreign nodes change nothing, and
		// nor does the listing's order while it tells who is older.
		holders := func(children []string) []string {
			var h []string
			for _, p := range sorted {
				if ok, _, _, err := decide(children, rc.names, p, rc.rule); err != nil {
					t.Fatalf("%s: participant %q: %v", rc.name, p, err)
				} else if ok {
					h = append(h, p)
				}
			}
			return h
		}
		h := holders(children)
		if err := rc.safe(h, len(sorted)); err != nil {
			t.Fatalf("%s: listing %q: %v", rc.name, children, err)
		}
		if len(h) == 0 && len(sorted) > 0 && !rc.counting {
			t.Fatalf("%s: nobody holds in %q", rc.name, sorted)
		}
		participants := slices.DeleteFunc(slices.Clone(children), func(c string) bool {
			_, _, ok := modelSeq(c, rc.names)
			return !ok
		})
		if !slices.Equal(holders(participants), h) {
			t.Fatalf("%s: foreign nodes in %q changed the holders", rc.name, children)
		}
		if known && distinct(sorted, rc.names) {
			reversed := slices.Clone(children)
			slices.Reverse(reversed)
			if back := holders(reversed); !slices.Equal(back, h) {
				t.Fatalf("%s: holders %q, but %q with the listing reversed", rc.name, h, back)
			}
		}
	})
}
