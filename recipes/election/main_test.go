package election

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zkrecipes/zkrecipes/framework"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(zkrtest.SharedServer(m)) }

const wait = zkrtest.Wait

var (
	testCtx   = zkrtest.Context
	newClient = zkrtest.Client
	children  = zkrtest.Children
)

// referee records who believes it leads, and fails the test if two ever do at once,
// or if a new term's fencing token is not above every earlier one. Listeners hear a
// change after the latch has made it, so a latch the referee still counts as leading
// may have stopped already: two lead at once only if the other's IsLeader says so.
type referee struct {
	mu         sync.Mutex
	leaders    map[string]leaderState
	lastToken  int64
	lastWho    string
	terms      map[string]int
	violations []string
}

func newReferee(t *testing.T) *referee {
	r := &referee{leaders: map[string]leaderState{}, terms: map[string]int{}}
	t.Cleanup(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		require.Empty(t, r.violations, "the election's invariants")
	})
	return r
}

// leaderState is what the referee reads of a Latch or a Selector.
type leaderState interface {
	IsLeader() bool
	FencingToken() int64
}

func (r *referee) lead(who string, l leaderState) {
	token := l.FencingToken()
	r.mu.Lock()
	defer r.mu.Unlock()
	for other, ol := range r.leaders {
		if ol.IsLeader() && l.IsLeader() {
			r.violations = append(r.violations, fmt.Sprintf("%s leads while %s leads", who, other))
		}
	}
	switch {
	case token == 0: // the term ended (Close, a loss) before its listener read it
	case token == r.lastToken && who == r.lastWho: // a later term of ours, read by an earlier term's call too
	case token <= r.lastToken:
		r.violations = append(r.violations, fmt.Sprintf("%s's token %d is not above %d", who, token, r.lastToken))
	default:
		r.lastToken, r.lastWho = token, who
	}
	r.leaders[who] = l
	r.terms[who]++
}

func (r *referee) follow(who string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.leaders, who)
}

func (r *referee) termsOf(who string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.terms[who]
}

// watch makes the referee follow a latch, which must have NotifyOnClose: a latch
// closed without it leaves silently, and the referee would not hear it stop.
func (r *referee) watch(who string, l *Latch) {
	l.Listen(func(leads bool) {
		if leads {
			r.lead(who, l)
		} else {
			r.follow(who)
		}
	})
}

func newLatch(t *testing.T, c *framework.Client, path string, opts ...Option) *Latch {
	t.Helper()
	l, err := NewLatch(c, path, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close(context.Background()) })
	return l
}

func leaders(latches []*Latch) (n, which int) {
	which = -1
	for i, l := range latches {
		if l.IsLeader() {
			n++
			which = i
		}
	}
	return n, which
}
