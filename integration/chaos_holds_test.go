package integration

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

// A hold is one participant's belief that it holds a lock, a lease or the leadership:
// from the moment the recipe said so until the participant stopped acting on it.
type hold struct {
	id     int
	client *chaosClient
	kind   string // lock, read, write, lease, leader
	node   string
	token  int64
	// session is the one the node belongs to, as far as the client could tell.
	session int64

	start, end time.Time
	// lostAt is when the recipe's Lost signal closed during the hold; zero if it
	// did not.
	lostAt time.Time
	// signalled is when a goroutine waiting on the signal the holder stops on (a
	// partition work's ctx) saw it close; zero if not recorded. Set before the hold
	// is recorded.
	signalled time.Time
	// live: our node still existed after end, so its session was alive the whole
	// time. Only live holds are held to exclusion: a participant whose session died
	// may go on believing for a moment (that is what Lost and the fence are for),
	// but two live ones must never overlap.
	live bool
	// refused counts this holder's writes that the fenced register turned down.
	refused int
}

// label names the hold by what is fixed once it began, so that another holder's
// goroutine may print it.
func (h *hold) label() string {
	return fmt.Sprintf("%s %s #%d (token %d, %s)", h.client.name, h.kind, h.id, h.token, h.node)
}

func (h *hold) String() string {
	return fmt.Sprintf("%s %s #%d (token %d, %s, %s–%s)", h.client.name, h.kind, h.id, h.token, h.node,
		h.start.Format("15:04:05.000"), h.end.Format("15:04:05.000"))
}

// fencedRegister stands for the store that a lock protects: it remembers the highest
// fencing token it accepted and refuses writes that carry a lower one. Refusing
// stale writers is its job, so a refusal is not a fault of the recipe; two holders
// writing with the same token, or a live holder refused, are.
type fencedRegister struct {
	mu         sync.Mutex
	highest    int64
	owner      *hold
	accepted   int
	refused    int
	violations []string
}

// write is h's write; false when the register refused it.
func (r *fencedRegister) write(h *hold) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case h.token < r.highest:
		r.refused++
		h.refused++
		return false
	case h.token == r.highest && r.owner != h:
		r.violations = append(r.violations, fmt.Sprintf("token %d accepted from two holders: %s and %s", h.token, r.owner.label(), h.label()))
	}
	r.highest, r.owner = h.token, h
	r.accepted++
	return true
}

// An exclusion rule says what is wrong with a set of holds live at one instant, or
// "" when nothing is.
type exclusion func(active []*hold) string

func atMost(n int) exclusion {
	return func(active []*hold) string {
		if len(active) > n {
			return fmt.Sprintf("%d live holders at once, at most %d allowed", len(active), n)
		}
		return ""
	}
}

// writerAlone: readers share, a writer holds alone.
func writerAlone(active []*hold) string {
	if len(active) < 2 {
		return ""
	}
	for _, h := range active {
		if h.kind == "write" {
			return fmt.Sprintf("a writer with %d other live holders", len(active)-1)
		}
	}
	return ""
}

// overlaps sweeps the live holds in time and reports every instant at which rule
// finds the live set wrong. A hold's interval on the client lies within its node's
// life on the server, so an overlap here is an overlap there.
func overlaps(holds []*hold, rule exclusion) []string {
	type edge struct {
		at    time.Time
		start bool
		h     *hold
	}
	var edges []edge
	for _, h := range holds {
		if h.live {
			edges = append(edges, edge{h.start, true, h}, edge{h.end, false, h})
		}
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		switch {
		case a.h == b.h: // a hold too short for the clock: its start first
			if a.start {
				return -1
			}
			return 1
		case a.start == b.start:
			return 0
		}
		if a.start { // ends first: touching intervals do not overlap
			return 1
		}
		return -1
	})
	var problems []string
	var active []*hold
	for _, e := range edges {
		if !e.start {
			active = slices.DeleteFunc(active, func(h *hold) bool { return h == e.h })
			continue
		}
		active = append(active, e.h)
		if p := rule(active); p != "" {
			problems = append(problems, fmt.Sprintf("%s: %v", p, active))
		}
	}
	return problems
}

// tokensIncrease checks that live exclusive holds, in the order they began, carry
// growing fencing tokens.
func tokensIncrease(holds []*hold, exclusive func(*hold) bool) []string {
	var live []*hold
	for _, h := range holds {
		if h.live && exclusive(h) {
			live = append(live, h)
		}
	}
	slices.SortFunc(live, func(a, b *hold) int { return a.start.Compare(b.start) })
	var problems []string
	for i := 1; i < len(live); i++ {
		if live[i].token <= live[i-1].token {
			problems = append(problems, fmt.Sprintf("token did not grow: %v then %v", live[i-1], live[i]))
		}
	}
	return problems
}
