package lockqueue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/internal/hold"
)

// ErrLost is returned by Release when the hold had been lost before it: the node
// went with its session, or someone deleted it. The error says which (ErrNodeDeleted,
// ErrSessionExpired, ErrSuspended, framework.ErrClosed).
var ErrLost = errors.New("the hold was lost before the release")

// Why a hold was lost, as the hold's Cause and its release's error say. Users tell
// them apart through the framework's errors they wrap.
var (
	// ErrNodeDeleted: our node was deleted while our session lived: by another
	// client (an operator's delete, a script's clean-up) or by a server that lost it.
	// It wraps framework.ErrNoNode.
	ErrNodeDeleted = fmt.Errorf("our node was deleted while our session lived (%w)", framework.ErrNoNode)
	// ErrSessionExpired: our session ended (the server expired it, or the client gave
	// it up after a whole session timeout without a server), and its ephemeral node
	// with it. It wraps framework.ErrSessionExpired.
	ErrSessionExpired = fmt.Errorf("our session expired (%w)", framework.ErrSessionExpired)
	// ErrSuspended: the connection dropped, and the client's error policy counts that
	// as a loss (StandardErrorPolicy).
	ErrSuspended = errors.New("the connection was suspended, which the error policy counts as a loss")
)

// RevokeMessage is what another client writes into a holder's node to ask it to
// release (Curator's Revoker).
const RevokeMessage = "__REVOKE__"

// Tracker follows one participant's node while it holds, or expects to hold soon
// (it is the first in line), across its holds on that node (a latch's terms): it
// hears the node's notifications and the client's states through the client's
// holders, and keeps what our node's data watch found. It is the participant's one
// lifecycle: follow starts it, Stop ends it; each hold granted through it is a Held.
//
// A queued waiter has one once it expects to hold (Queue.wait), or, in a queue that
// says so (WatchOwnNodeWhileQueued), from its first watch on the node ahead, with
// which it sets our node's watch in the same write, unless that watch needs a read
// (its ACL does not let anyone read it, see framework.CreateTrace.AnyoneReads). A
// waiter reads the client's StateChanges, shared by every waiter, to be woken on
// every change and to count the error states around its listing. A Tracker from the
// first watch cost a mutex's queued waiter about 140 bytes more (BenchmarkQueuedWaiterHeap:
// 902 against 760 bytes).
type Tracker struct {
	q        *Queue
	watching sync.WaitGroup // watchWith's watch, sent beside the participant's request

	mu   sync.Mutex
	node *Node // followed (among the client's holders) while set
	h    *Held // the hold granted through t, until it ends
	// Our node's data watch: armed while it is set and has not fired (fired counts
	// the changes heard since the watch's request was sent), with what we know of the
	// node: its czxid, whether its data asks for a release, and the zxid as of which
	// we know that (known: its czxid, from the create; the mzxid a read found; 0 once
	// a change was heard, until it is read); deleted once the node's deletion was
	// heard.
	armed, fired, revoke, deleted bool
	token, known                  int64
}

// Track makes a Tracker of a participant in q; Stop it when the participant is done
// with its node.
func (q *Queue) Track() *Tracker { return &Tracker{q: q} }

// follow makes t hear what happens to our node n, until Stop.
func (t *Tracker) follow(n *Node) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.node == nil {
		t.node = n
		t.token = n.Czxid
		if n.AnyoneReads {
			t.known = n.Czxid
		}
		t.q.holders().follow(n.Path, t)
	}
}

// Stop stops following our node: its watch, if still set, is no longer heard.
func (t *Tracker) Stop() {
	t.mu.Lock()
	n := t.node
	t.node, t.armed = nil, false
	t.mu.Unlock()
	if n != nil {
		t.q.holders().forget(n.Path, t)
	}
}

// stateLost loses t's hold, if granted before the errorStates-th error state (its
// grant saw fewer: see Tracker.grant), for cause.
func (t *Tracker) stateLost(cause error, errorStates int64) {
	t.mu.Lock()
	h := t.h
	t.mu.Unlock()
	if h != nil && h.epoch < errorStates {
		h.move(loss, cause)
	}
}

// nodeDeleted is told that our node's deletion was heard (on the client's receiving
// goroutine): a hold ends at once, and a grant under way is refused.
func (t *Tracker) nodeDeleted() {
	t.mu.Lock()
	t.deleted, t.armed = true, false
	h := t.h
	t.mu.Unlock()
	if h != nil {
		h.move(loss, ErrNodeDeleted)
	}
}

// dataChanged is told that our node's data watch fired for a change of data (on the
// client's receiving goroutine): a holder sets it again, off that goroutine, since
// that is a request; a grant under way does so once it has recorded the hold.
func (t *Tracker) dataChanged() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.armed, t.fired, t.known = false, true, 0
	if h := t.h; h != nil && h.state == holding {
		go t.rearm(h)
	}
}

// epoch counts the error states the client has published; take it before a listing,
// for grant.
func (t *Tracker) epoch() int64 {
	errorStates, _ := t.q.client.ForRecipes().StateChanges()
	return errorStates
}

// beforeHolding, if set, runs in grant once our node is followed and read, before
// the hold is recorded: a test's way to publish a state in that window.
var beforeHolding func()

// grant makes node n a holder, once a listing (taken at epoch) found it holding. It
// reads n with a data watch (watch), unless a waiter's watch is still set: the hold's
// one watch, and its czxid, the fencing token.
// It reports false, and grants nothing, if an error state came since that listing
// or the client has closed: the participant must look again (and a closed client's
// listing says ErrClosed). A node found gone is ErrNodeGone. t keeps following n
// whatever the outcome: Stop it when the participant gives up.
func (t *Tracker) grant(ctx context.Context, epoch int64, n *Node) (*Held, bool, error) {
	unwatched := t.q.unwatched
	// Followed first: the client's holders hear, from now on, every error state, our
	// node's deletion and the client's close; what came before is in the checks below.
	t.follow(n)
	t.mu.Lock()
	armed := t.armed
	t.mu.Unlock()
	// A waiter that expected to hold set the watch with its listing (wait): then the
	// grant reads nothing. Nor does it when the create's reply gave the node's czxid,
	// the fencing token: the watch is then set once the hold is recorded (rearm
	// below), and a deletion it finds ends the hold, as one heard later does.
	if !armed && !unwatched && n.Czxid == 0 {
		if err := t.watch(ctx, n); err != nil {
			return nil, false, err
		}
	}
	if beforeHolding != nil {
		beforeHolding()
	}
	// The count is compared under t.mu, as stateLost reads t.h: the holders' listener
	// ran before for a state in the count, or finds the hold recorded.
	t.mu.Lock()
	defer t.mu.Unlock()
	switch errorStates, _ := t.q.client.ForRecipes().StateChanges(); {
	case t.deleted:
		return nil, false, ErrNodeGone
	case errorStates != epoch, t.q.client.ForRecipes().Context().Err() != nil:
		return nil, false, nil
	}
	h := &Held{Node: n, token: t.token, t: t, epoch: epoch, state: holding, lost: make(chan struct{})}
	h.since = t.q.observer.granted()
	t.h = h
	if !t.armed && !unwatched {
		// The watch fired for a change of data before the hold was recorded
		// (dataChanged), or the create's reply gave the czxid: set it now, or a later
		// deletion goes unheard. rearm reads the data for a revocation request too.
		go t.rearm(h)
	} else if t.q.onRevoke != nil && t.revoke {
		go t.q.onRevoke() // asked before we held: it may well Release
	}
	return h, true, nil
}

// watch sets our node's data watch: as of the zxid at which we know the node
// (armWith), or, where it cannot, with a read of the node: its czxid, the fencing
// token, and its data, for a revocation request. The node must be followed before
// the request: a deletion after its answer is heard, and so is one before it, for a
// watch set as of a zxid; for a read, it is ErrNoNode, reported as ErrNodeGone, as is
// a node of another session.
//
// GetW, not ExistsW: an exists that finds no node leaves a watch on it for the rest
// of the session. An ACL that refuses us READ on our own node refuses the read too,
// and with it the hold: the grant, when it reads (no czxid from the create), or the
// hold at once (rearm), since its node could not be watched.
func (t *Tracker) watch(ctx context.Context, n *Node) error {
	if _, ok, err := t.armWith(ctx, n, ""); ok || err != nil {
		return err
	}
	t.mu.Lock()
	t.fired = false
	t.mu.Unlock()
	data, stat, _, err := t.q.client.GetW(ctx, n.Path)
	switch {
	case errors.Is(err, framework.ErrNoNode):
		return ErrNodeGone
	case err != nil:
		return err
	case stat.EphemeralOwner != n.Session:
		return ErrNodeGone // not the node of the session that made it: see createNode
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	// A change heard since the read was sent may have fired this very watch; then
	// it is set again (by grant, or by dataChanged for a holder). A watch set once
	// t stopped following is heard by nobody: not armed.
	t.armed = !t.fired && t.node == n
	t.token, t.revoke, t.known = stat.Czxid, string(data) == RevokeMessage, stat.Mzxid
	return nil
}

// armWith sets our node's data watch as of the zxid at which we know the node
// (known), with no read: a change since, a revocation request written into it, or
// its deletion notifies at once, and a node made again at its path by someone else
// is a change since. Only a node anyone may read is watched so (known stays 0 for
// others: see follow). If ahead is not "", the waiter's watch on the node ahead is
// set with it and comes on the channel (framework.Plumbing.WatchDataSince): in the
// same request, as of known, where ahead's name says anyone may read it (made
// before ours, it has not changed since known, unless written or made since, which
// wakes us once for nothing; then we hold our watch, and read the node ahead);
// else in the same write, with a read, which the server refuses if we may not read
// that node, and whose error is returned. It reports whether our watch was set so; if not (a change heard and not
// read yet, a client that cannot write its own requests), the caller reads the node
// (watch), and the channel, if any, is ahead's watch alone.
func (t *Tracker) armWith(ctx context.Context, n *Node, ahead string) (<-chan framework.Event, bool, error) {
	t.mu.Lock()
	since := t.known
	if since != 0 {
		t.fired = false
	}
	t.mu.Unlock()
	if since == 0 {
		return nil, false, nil
	}
	ch, ok, err := t.q.client.ForRecipes().WatchDataSince(ctx, t.q.client, since, ahead, n.Path)
	if ok {
		t.mu.Lock()
		t.armed = !t.fired && t.node == n && !t.deleted
		t.mu.Unlock()
	}
	return ch, ok, err
}

// watchWith runs fn, and, if arm and t's watch is not armed, t.watch in the same
// flight. The watch's error is left for the grant to meet: it reads our node again
// when the watch is not armed. A nil t only runs fn.
func (t *Tracker) watchWith(ctx context.Context, n *Node, arm bool, fn func()) {
	if t == nil || !arm || t.ready() {
		fn()
		return
	}
	t.follow(n)
	t.watching.Add(1)
	t.q.client.ForRecipes().Go(func() { t.watchAside(ctx, n) })
	fn()
	t.watching.Wait()
}

func (t *Tracker) watchAside(ctx context.Context, n *Node) {
	defer t.watching.Done()
	_ = t.watch(ctx, n)
}

// ready says whether a grant need not read our node: its data watch is set and
// has not fired, or the holder does not watch it.
func (t *Tracker) ready() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.armed || t.q.unwatched
}

// holds says whether h is t's hold and holds.
func (t *Tracker) holds(h *Held) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.h == h && h.state == holding
}

// rearm sets our node's data watch again for hold h, once it has fired for a change
// of data or was never set, and reads the data for a revocation request, if the
// holder hears them. A deletion it finds is a deletion heard. It gives up once h no
// longer holds: the request then carries on under the client's context only.
func (t *Tracker) rearm(h *Held) {
	ctx := t.q.client.ForRecipes().Context()
	for t.holds(h) {
		err := t.watch(ctx, h.Node)
		switch {
		case !t.holds(h):
			return
		case errors.Is(err, ErrNodeGone):
			t.nodeDeleted()
		case errors.Is(err, framework.ErrClosed):
			// the client's close loses the hold
		case errors.Is(err, framework.ErrSessionExpired):
			h.move(loss, ErrSessionExpired)
		case err != nil && !framework.IsRetryable(err):
			// Refused (our node's ACL was changed): a hold whose node can no longer be
			// watched would not hear its deletion, so it is lost, as grant refuses it.
			t.q.client.ForRecipes().Logger().Warn("zkrecipes: cannot watch our node any more", "node", h.Node.Path, "error", err)
			h.move(loss, fmt.Errorf("our node can no longer be watched: %w", err))
		case err != nil: // a long outage: watch again once it is over
			if t.q.client.WaitConnected(ctx) == nil {
				continue
			}
		default:
			t.mu.Lock()
			revoke := t.revoke
			t.mu.Unlock()
			// Only for a hold still held: a reply that comes after Release must not ask
			// the participant's next hold to go.
			if t.q.onRevoke != nil && revoke {
				go t.q.onRevoke() // it may well Release
			}
		}
		return
	}
}

// holdState is where a hold stands. It moves only by next, a pure function of the
// state and what happened; Held.move applies the move and its effects.
type holdState uint8

const (
	holding holdState = iota // granted: Lost open
	lost                     // lost while held: Lost closed, Cause says why
	ended                    // released, forgotten or passed on by its holder: Lost closed
)

// holdEvent is what happens to a hold.
type holdEvent uint8

const (
	loss holdEvent = iota // an error state, the client's close, our node's deletion
	end                   // its holder's Release, Forget or Pass
)

// next is the state after e: a loss counts only while holding (a hold lost or ended
// stays so), and its holder's end is final.
func (s holdState) next(e holdEvent) holdState {
	switch {
	case e == end:
		return ended
	case s == holding:
		return lost
	}
	return s
}

// Held is a node that holds: a lock, a lease, a leadership; one hold, from its grant
// to its end.
type Held struct {
	Node  *Node
	token int64
	t     *Tracker
	epoch int64     // the error states counted before the listing that granted it
	since time.Time // when it was granted, if measured
	lost  chan struct{}

	// Guarded by t.mu.
	state  holdState
	cause  error          // why it was lost
	onLost []*func(error) // whenLost's calls
}

// move applies e to the hold, with cause for a loss, and reports the state it was
// in. Leaving holding closes Lost and makes whenLost's calls, under t.mu, on the
// goroutine that records the move: a hold's Context has ended before anything the
// loss lets run (a waiter of the same client granted on the deletion's notification).
func (h *Held) move(e holdEvent, cause error) (from holdState, why error) {
	t := h.t
	t.mu.Lock()
	from = h.state
	to := from.next(e)
	h.state = to
	switch {
	case from == holding && to == lost:
		h.cause = cause
	case from == lost && errors.Is(cause, ErrSessionExpired) && errors.Is(h.cause, ErrSuspended):
		h.cause = cause // the suspension that lost it turned out to be the session's end
	}
	if from == holding {
		close(h.lost)
		for _, f := range h.onLost {
			(*f)(h.cause)
		}
		h.onLost = nil
	}
	if to == ended && t.h == h {
		t.h = nil // t may grant the participant's next hold (Pass)
	}
	why = h.cause
	t.mu.Unlock()
	switch {
	case from == holding && to == lost:
		t.q.observer.lost()
	case from != ended && to == ended:
		t.q.observer.ended(h.since)
	}
	return from, why
}

// whenLost calls f, which must not block nor call the hold, with the hold's Cause as
// the hold is lost or ends (at once if it has), on the goroutine that records it;
// stop, before that, undoes it.
func (h *Held) whenLost(f func(cause error)) (stop func()) {
	t := h.t
	t.mu.Lock()
	if h.state != holding {
		cause := h.cause
		t.mu.Unlock()
		f(cause)
		return func() {}
	}
	key := &f
	h.onLost = append(h.onLost, key)
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		h.onLost = slices.DeleteFunc(h.onLost, func(g *func(error)) bool { return g == key })
		t.mu.Unlock()
	}
}

// Lost closes when the hold may have been lost (the client's error policy counted a
// connection state as an error, the client closed, or our node was deleted), and on
// the hold's end. It never reopens; Cause says why it closed.
func (h *Held) Lost() <-chan struct{} { return h.lost }

// Holds reports whether the hold is still held: Lost has not closed.
func (h *Held) Holds() bool { return !hold.Ended(h.lost) }

// Cause says why the hold was lost: an error wrapping ErrNodeDeleted,
// ErrSessionExpired, ErrSuspended or framework.ErrClosed; nil while it holds, and
// after a release or Forget that came before any loss.
func (h *Held) Cause() error {
	h.t.mu.Lock()
	defer h.t.mu.Unlock()
	return h.cause
}

// FencingToken grows with every holder, so a store can refuse a writer whose token is
// lower than one it has seen. It is our node's czxid, the zxid of its creation: what
// anyone who reads the server sees (zkr inspect, the participants reader). Under an
// exclusive rule holders are granted in their nodes' creation order, so it grows from
// one holder to the next, across a container parent made again too (a zxid never
// goes back, unlike a sequence number).
func (h *Held) FencingToken() int64 { return h.token }

// Context returns a copy of parent that ends as soon as the hold may be lost or ends,
// with a cause that wraps lost and says why (Cause): the one-call way for a holder to
// stop its work.
//
// It has ended by the time anything the loss lets happen can happen: the loss ends it
// on the goroutine that records the loss (for a deleted node, the client's
// receiving goroutine, before a waiter of the same client hears the deletion).
func (h *Held) Context(parent context.Context, lost error) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	stop := h.whenLost(func(why error) {
		if why != nil {
			lost = fmt.Errorf("%w: %w", lost, why)
		}
		cancel(lost)
	})
	return ctx, func() {
		stop()
		cancel(context.Canceled)
	}
}

// Release deletes the node. It returns an error wrapping ErrLost if the hold had been
// lost (and why), and one wrapping framework.ErrDeleteInBackground if the delete goes
// on in the background; the hold is over either way. A second Release does nothing.
func (h *Held) Release(ctx context.Context) error {
	c := h.t.q.client
	// A new session, or none after a Lost: ours ended, perhaps unheard (a process
	// paused past its session timeout), whatever the hold heard first.
	if sid := c.SessionID(); (sid != 0 && sid != h.Node.Session) || (sid == 0 && c.State() == framework.Lost) {
		h.move(loss, ErrSessionExpired)
	}
	from, lost := h.move(end, nil)
	if from == ended {
		return ErrLost
	}
	h.t.Stop()
	err := h.Node.Delete(ctx, c)
	switch {
	case lost != nil:
		return fmt.Errorf("%w: %s: %w", ErrLost, h.Node, lost)
	case errors.Is(err, framework.ErrNoNode):
		return fmt.Errorf("%w: %s: %w", ErrLost, h.Node, ErrNodeDeleted)
	}
	return err
}

// Forget ends the hold but keeps the node in the queue: a leader latch that lost
// leadership to a Suspended keeps its place, and checks it again once reconnected.
func (h *Held) Forget() {
	if from, _ := h.move(end, nil); from != ended {
		h.t.Stop()
	}
}

// Pass is Forget, and returns the Tracker for the participant's next hold on the
// same node (Queue.Await), which keeps following the node and its watch: a watch
// still set is not set again, so a latch that loses and regains its leadership on
// the same node adds no watch of go-zookeeper's each term. It returns nil if the
// hold had ended already. Stop the Tracker unless a hold takes it over.
func (h *Held) Pass() *Tracker {
	if from, _ := h.move(end, nil); from == ended {
		return nil
	}
	return h.t
}
