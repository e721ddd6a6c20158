package lockqueue

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/framework"
)

// ErrLost is returned by Release when the hold had been lost before it: the node
// went with its session, or someone deleted it.
var ErrLost = errors.New("the hold was lost before the release")

// RevokeMessage is what another client writes into a holder's node to ask it to
// release (Curator's Revoker).
const RevokeMessage = "__REVOKE__"

// Tracker follows the client's connection states for one participant once it holds:
// it closes lost on the first state the error policy counts as an error, or when the
// client closes. grant refuses the hold if an error state came since the listing
// that found it holding.
//
// A waiter needs none: it reads the client's StateChanges, shared by every waiter,
// to be woken on every change and to count the error states around its listing.
// Only a holder registers a listener and follows the client's close. A listener and
// a channel per waiter were a third of a queued waiter's memory, and the Tracker
// itself, kept while waiting, another tenth (112 bytes).
type Tracker struct {
	c         *framework.Client
	stopState func()      // set by grant
	stopClose func() bool // set by grant

	observer *Observer // what the hold reports to

	mu      sync.Mutex
	holding bool
	since   time.Time // when the hold was granted, if measured

	lost     chan struct{} // made by grant: a waiter that never holds needs none
	lostOnce sync.Once
}

// Track makes a Tracker of a participant in q, whose hold reports to q's observer;
// Stop it unless a Held took it over.
func (q *Queue) Track() *Tracker { return &Tracker{c: q.client, observer: q.observer} }

// failed loses the hold, if there is one, to an error state or the client's close.
func (t *Tracker) failed() {
	t.mu.Lock()
	holding := t.holding
	t.mu.Unlock()
	if holding {
		t.lose()
	}
}

// lose loses the hold, and counts it lost unless it had already ended.
func (t *Tracker) lose() {
	if t.markLost() {
		t.observer.lost()
	}
}

// end ends the hold for its holder: Lost closes, and its time is recorded.
func (t *Tracker) end() {
	t.markLost()
	t.mu.Lock()
	since := t.since
	t.mu.Unlock()
	t.observer.ended(since)
}

// epoch counts the error states the client has published; take it before a listing,
// for grant.
func (t *Tracker) epoch() int64 {
	errorStates, _ := t.c.ForRecipes().StateChanges()
	return errorStates
}

// Stop stops following the client's states.
func (t *Tracker) Stop() {
	t.mu.Lock()
	stopState, stopClose := t.stopState, t.stopClose
	t.mu.Unlock()
	if stopState != nil {
		stopState()
	}
	if stopClose != nil {
		stopClose()
	}
}

// beforeHolding, if set, runs in grant once the holder's listener is registered and
// before the hold is recorded: a test's way to publish a state in that window.
var beforeHolding func()

// grant makes node n a holder, unless an error state came since the listing that
// found it holding (taken at epoch), or the client has closed: then the participant
// must look again (and a closed client's listing says ErrClosed). parent is that
// listing's stat of the lock path, whose pzxid becomes the fencing token. The Held
// takes the Tracker over.
func (t *Tracker) grant(epoch int64, n *Node, parent *zk.Stat) (*Held, bool) {
	// The listener first, then the count: an error state published before the
	// listener hears nothing is in the count, and refuses the grant.
	policy := t.c.ForRecipes().ErrorPolicy()
	stopState := t.c.Listen(func(s framework.ConnectionState) {
		if policy.IsError(s) || s == framework.Lost {
			t.failed()
		}
	})
	if beforeHolding != nil {
		beforeHolding()
	}
	// The count is compared under t.mu, as failed reads holding: the listener's
	// failed ran before (its state is in the count), or runs once the hold is recorded.
	t.mu.Lock()
	if errorStates, _ := t.c.ForRecipes().StateChanges(); errorStates != epoch || t.c.ForRecipes().Context().Err() != nil {
		t.mu.Unlock()
		stopState()
		return nil, false
	}
	defer t.mu.Unlock()
	t.stopState = stopState
	t.lost = make(chan struct{})
	t.holding = true
	// A closed client says nothing more, but its session is gone with our node. Only
	// a holder follows the close this way, from here on: a waiter's next request says
	// ErrClosed, and a context.AfterFunc per waiter cost each waiter its registration
	// in the client's context (a thousand queued waiters, a thousand of them). A
	// close from now on, or already under way, runs failed at once and loses the hold.
	t.stopClose = context.AfterFunc(t.c.ForRecipes().Context(), t.failed)
	t.since = t.observer.granted()
	return &Held{Node: n, token: parent.Pzxid, c: t.c, t: t}, true
}

// markLost closes lost, and reports whether this call did.
func (t *Tracker) markLost() (closed bool) {
	t.lostOnce.Do(func() { close(t.lost); closed = true })
	return closed
}

func (t *Tracker) isLost() bool { return isClosed(t.lost) }

// Held is a node that holds: a lock, a lease, a leadership.
type Held struct {
	Node  *Node
	token int64
	c     *framework.Client
	t     *Tracker

	stopRevocation context.CancelFunc
	revocation     sync.WaitGroup
	releaseOnce    sync.Once
}

// Lost closes when the hold may have been lost: the client's error policy counted a
// connection state as an error, or the node was seen deleted. It never reopens.
func (h *Held) Lost() <-chan struct{} { return h.t.lost }

// FencingToken grows with every holder, so a store can refuse a writer whose token is
// lower than one it has seen. It is the zxid of the last change among the lock path's
// children, as seen by the listing that granted the hold: at least our node's czxid,
// and below the token of any later holder, whose grant can only come after a later
// change (our node's deletion, at the latest). Unlike our czxid, which go-zookeeper
// would only give us for one more request, it comes with the listing.
func (h *Held) FencingToken() int64 { return h.token }

// Release deletes the node. It returns an error wrapping ErrLost if the hold had been
// lost, and one wrapping framework.ErrDeleteInBackground if the delete goes on in the
// background; the hold is over either way. A second Release does nothing.
func (h *Held) Release(ctx context.Context) error {
	err := ErrLost
	h.releaseOnce.Do(func() { err = h.release(ctx) })
	return err
}

func (h *Held) release(ctx context.Context) error {
	h.t.Stop()
	if h.stopRevocation != nil {
		h.stopRevocation()
		h.revocation.Wait()
	}
	lost := h.t.isLost()
	if !lost && h.c.SessionID() != h.Node.Session {
		h.t.lose()
		lost = true
	}
	h.t.end()
	err := h.Node.Delete(ctx, h.c)
	switch {
	case lost:
		return fmt.Errorf("%w: %s", ErrLost, h.Node)
	case errors.Is(err, zk.ErrNoNode):
		return fmt.Errorf("%w: %s was deleted by someone else", ErrLost, h.Node)
	}
	return err
}

// Forget ends the hold but keeps the node in the queue: a leader latch that lost
// leadership to a Suspended keeps its place, and checks it again once reconnected.
func (h *Held) Forget() {
	h.releaseOnce.Do(func() {
		h.t.Stop()
		h.t.end()
	})
}

// watchRevocation watches our node's data for Curator's revocation message, and
// for its deletion, which loses the hold.
func (h *Held) watchRevocation(onRevoke func()) {
	ctx, cancel := context.WithCancel(context.Background())
	h.stopRevocation = cancel
	h.revocation.Add(1)
	go func() {
		defer h.revocation.Done()
		for {
			data, _, ev, err := h.c.GetW(ctx, h.Node.Path)
			switch {
			case errors.Is(err, zk.ErrNoNode):
				h.t.lose()
				return
			case ctx.Err() != nil, errors.Is(err, framework.ErrClosed):
				return
			case err != nil && !framework.IsRetryable(err):
				// Refused (our node's ACL was changed) or our session ended: asking again
				// would get the same answer at once, in a busy loop.
				h.c.ForRecipes().Logger().Warn("zkrecipes: cannot watch our node for revocation any more", "node", h.Node.Path, "error", err)
				return
			case err != nil: // a long outage: keep watching once it is over
				if h.c.WaitConnected(ctx) != nil {
					return
				}
				continue
			}
			if string(data) == RevokeMessage {
				go onRevoke() // it may well Release, which waits for this goroutine
			}
			select {
			case e := <-ev:
				if e.Type == zk.EventNodeDeleted {
					h.t.lose()
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
}
