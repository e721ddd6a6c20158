package partition

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(zkrtest.SharedServer(m)) }

const wait = zkrtest.Wait

var (
	testCtx   = zkrtest.Context
	newClient = zkrtest.Client
	children  = zkrtest.Children
)

// registers is a fenced register per item, written by the works: a work enters its
// item's register when it starts and leaves it when it returns. The register
// refuses, and records as a violation, a second work inside at once, and a token
// that does not grow with a new owner.
type registers struct {
	mu         sync.Mutex
	inside     map[string]string // item -> the member whose work runs it
	token      map[string]int64  // item -> the highest token written
	runs       map[string]int    // item -> works started
	owner      map[string]string // item -> the member that ran it last
	violations []string
}

func newRegisters(t *testing.T) *registers {
	r := &registers{inside: map[string]string{}, token: map[string]int64{}, runs: map[string]int{}, owner: map[string]string{}}
	t.Cleanup(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		require.Empty(t, r.violations, "exclusivity and fencing")
	})
	return r
}

func (r *registers) enter(member string, it Item) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if other, ok := r.inside[it.Name]; ok {
		r.violations = append(r.violations, fmt.Sprintf("%s: %s's work started while %s's runs", it.Name, member, other))
	}
	switch last := r.token[it.Name]; {
	case it.FencingToken < last, it.FencingToken == last && r.owner[it.Name] != member:
		r.violations = append(r.violations, fmt.Sprintf("%s: %s's token %d after %d", it.Name, member, it.FencingToken, last))
	}
	r.inside[it.Name], r.token[it.Name], r.owner[it.Name] = member, it.FencingToken, member
	r.runs[it.Name]++
}

func (r *registers) leave(member string, it Item) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.inside[it.Name] == member {
		delete(r.inside, it.Name)
	}
}

// snapshot is who runs each item now, and how many works each item has started.
func (r *registers) snapshot() (map[string]string, map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	inside, runs := map[string]string{}, map[string]int{}
	for k, v := range r.inside {
		inside[k] = v
	}
	for k, v := range r.runs {
		runs[k] = v
	}
	return inside, runs
}

// work is a well-behaved work for member: it runs in the register until its ctx
// ends.
func (r *registers) work(member string) func(context.Context, Item) error {
	return func(ctx context.Context, it Item) error {
		r.enter(member, it)
		defer r.leave(member, it)
		<-ctx.Done()
		return nil
	}
}

// start makes and starts a member with a well-behaved work, closed at the end of
// the test.
func start(t *testing.T, c *framework.Client, path, id string, r *registers, opts ...Option) *Partitioner {
	t.Helper()
	p, err := New(c, path, r.work(id), append([]Option{WithID(id)}, opts...)...)
	require.NoError(t, err)
	require.NoError(t, p.Start(testCtx(t)))
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

// settled waits until the items are run by the members exactly as a balanced
// assignment would, with every member's Owned agreeing, and returns who runs what.
func settled(t *testing.T, r *registers, items []string, members map[string]*Partitioner) map[string]string {
	t.Helper()
	var inside map[string]string
	require.Eventually(t, func() bool {
		inside, _ = r.snapshot()
		if len(inside) != len(items) {
			return false
		}
		count := map[string]int{}
		for _, it := range items {
			m, ok := inside[it]
			if !ok || members[m] == nil {
				return false
			}
			count[m]++
		}
		floor := len(items) / len(members)
		for id, p := range members {
			if count[id] != floor && count[id] != floor+1 {
				return false
			}
			var mine []string
			for it, m := range inside {
				if m == id {
					mine = append(mine, it)
				}
			}
			slices.Sort(mine)
			if !slices.Equal(mine, p.Owned()) {
				return false
			}
		}
		return true
	}, wait, 20*time.Millisecond, "the items never settled over %d members: %v", len(members), inside)
	return inside
}
