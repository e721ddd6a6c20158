package lockqueue

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/zkrecipes/zkrecipes/framework"
)

// holders are a client's participants that hold, or expect to hold soon, by their
// node's path. What may end their holds reaches them all through this one value per
// client (framework.Plumbing.Shared), as one session's Done serves every hold in
// etcd's concurrency package: one subscriber to the client's notifications, one
// listener of its connection states, one call on its close.
//
// A holder watches its own node (one data watch that lasts the session, set with the
// waiter's watch on the node ahead, or after a grant, as of the czxid the create
// gave: see Tracker.armWith), so that its hold ends as soon as the node is gone in a
// live session: an operator's delete, a script, a server that lost it (an expiry is
// heard as a connection state). The notification is heard on the
// client's receiving goroutine (OnWatchEvent), not on a watch's channel: the loss is
// recorded before any later reply of that connection is handed out, so a waiter of
// the same client that is granted the lock after our node's deletion finds our hold
// lost already. A subscriber, listener and close call per hold were 11 allocations
// of every grant.
type holders struct {
	mu     sync.Mutex
	byPath map[string]*Tracker
}

type holdersKey struct{}

// holdersOf is c's holders, made on first use; they live as long as c.
func holdersOf(c *framework.Client) *holders {
	return c.ForRecipes().Shared(c, holdersKey{}, func() any { return newHolders(c) }).(*holders)
}

func newHolders(c *framework.Client) *holders {
	hs := &holders{byPath: map[string]*Tracker{}}
	p := c.ForRecipes()
	policy := p.ErrorPolicy()
	stopEvents := c.OnWatchEvent(hs.heard)
	stopStates := c.Listen(func(s framework.ConnectionState) {
		if policy.IsError(s) || s == framework.Lost {
			// Counted when it was published, before this delivery: a hold whose grant
			// saw this count already (its epoch) was granted after the state.
			errorStates, _ := p.StateChanges()
			for _, t := range hs.all() {
				t.stateLost(stateCause(s), errorStates)
			}
		}
	})
	// A closed client says nothing more, but its session is gone with our nodes.
	context.AfterFunc(p.Context(), func() {
		stopEvents()
		stopStates()
		for _, t := range hs.all() {
			t.stateLost(framework.ErrClosed, math.MaxInt64) // after every grant
		}
	})
	return hs
}

// follow makes t hear what happens to its node p, until forget.
func (hs *holders) follow(p string, t *Tracker) {
	hs.mu.Lock()
	hs.byPath[p] = t
	hs.mu.Unlock()
}

func (hs *holders) forget(p string, t *Tracker) {
	hs.mu.Lock()
	if hs.byPath[p] == t {
		delete(hs.byPath, p)
	}
	hs.mu.Unlock()
}

func (hs *holders) all() []*Tracker {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	ts := make([]*Tracker, 0, len(hs.byPath))
	for _, t := range hs.byPath {
		ts = append(ts, t)
	}
	return ts
}

// heard runs on the client's receiving goroutine: it must not block.
func (hs *holders) heard(ev framework.Event) {
	if ev.Type != framework.EventNodeDeleted && ev.Type != framework.EventNodeDataChanged {
		return
	}
	hs.mu.Lock()
	t := hs.byPath[ev.Path]
	hs.mu.Unlock()
	switch {
	case t == nil:
	case ev.Type == framework.EventNodeDeleted:
		t.nodeDeleted()
	default:
		t.dataChanged()
	}
}

// stateCause is why a connection state loses a hold.
func stateCause(s framework.ConnectionState) error {
	if s == framework.Lost {
		return ErrSessionExpired
	}
	return fmt.Errorf("%w (%s)", ErrSuspended, s)
}
