package lockqueue

import (
	"context"
	"errors"
	"fmt"
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

// Tracker follows one participant once it holds: it closes lost on the first
// connection state the error policy counts as an error, when the client closes, and
// when the node is deleted (its one data watch, see nodewatch.go). grant refuses the
// hold if an error state came since the listing that found it holding.
//
// A waiter needs none: it reads the client's StateChanges, shared by every waiter,
// to be woken on every change and to count the error states around its listing.
// Only a holder registers a listener, follows the client's close and watches its
// node. A listener and a channel per waiter were a third of a queued waiter's memory,
// and the Tracker itself, kept while waiting, another tenth (112 bytes).
type Tracker struct {
	c         *framework.Client
	stopState func()      // set by grant
	stopClose func() bool // set by grant
	stopWatch func()      // set by follow
	passWatch func(*Tracker)
	cancel    context.CancelFunc

	observer  *Observer // what the hold reports to
	onRevoke  func()    // called when another client asks us to release; nil: none
	unwatched bool      // the queue's holders do not watch their node (Unwatched)

	mu      sync.Mutex
	holding bool
	deleted bool            // our node's deletion was heard
	node    *Node           // set by follow
	ctx     context.Context // ends with Stop: the watch's requests
	// Our node's data watch, set by watch: armed while it is set and has not fired
	// (fired counts the changes heard since the watch's read was sent), with what
	// that read found: the node's czxid and whether its data asks for a release.
	armed, fired bool
	token        int64
	revoke       bool
	since        time.Time // when the hold was granted, if measured
	cause        error     // why the hold was lost

	lost     chan struct{} // made by grant: a waiter that never holds needs none
	lostOnce sync.Once
	// whenLost's calls, made by the goroutine that loses the hold as it closes
	// lost, so that a hold's Context has ended before anything that loss lets run
	// (a waiter of the same client granted on the deletion's notification).
	onLost map[*func()]struct{}
}

// Track makes a Tracker of a participant in q, whose hold reports to q's observer;
// Stop it unless a Held took it over.
func (q *Queue) Track() *Tracker {
	return &Tracker{c: q.client, observer: q.observer, unwatched: q.unwatched}
}

// failed loses the hold, if there is one, for cause: an error state, the client's
// close, our node's deletion.
func (t *Tracker) failed(cause error) {
	t.mu.Lock()
	holding := t.holding
	if holding && errors.Is(cause, ErrSessionExpired) && errors.Is(t.cause, ErrSuspended) {
		t.cause = cause // the suspension that lost it turned out to be the session's end
	}
	t.mu.Unlock()
	if holding {
		t.lose(cause)
	}
}

// nodeDeleted is told that our node's deletion was heard (on the client's receiving
// goroutine): a hold ends at once, and a grant under way is refused.
func (t *Tracker) nodeDeleted() {
	t.mu.Lock()
	t.deleted = true
	t.mu.Unlock()
	t.failed(ErrNodeDeleted)
}

// lose loses the hold, and counts it lost unless it had already ended.
func (t *Tracker) lose(cause error) {
	if t.markLost(cause) {
		t.observer.lost()
	}
}

// end ends the hold for its holder: Lost closes, and its time is recorded.
func (t *Tracker) end() {
	t.markLost(nil)
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

// Stop stops following the client's states and our node.
func (t *Tracker) Stop() {
	t.mu.Lock()
	stops := []func(){t.stopState, t.stopWatch, t.cancel}
	stopClose := t.stopClose
	t.stopState, t.stopWatch, t.passWatch, t.cancel, t.stopClose = nil, nil, nil, nil, nil
	t.node, t.armed = nil, false // its watch is no longer heard
	t.mu.Unlock()
	for _, stop := range stops {
		if stop != nil {
			stop()
		}
	}
	if stopClose != nil {
		stopClose()
	}
}

// beforeHolding, if set, runs in grant once the holder's listener is registered and
// its node read, before the hold is recorded: a test's way to publish a state in
// that window.
var beforeHolding func()

// stateCause is why a connection state loses a hold.
func stateCause(s framework.ConnectionState) error {
	if s == framework.Lost {
		return ErrSessionExpired
	}
	return fmt.Errorf("%w (%s)", ErrSuspended, s)
}

// grant makes node n a holder, once a listing (taken at epoch) found it holding. It
// reads n with a data watch (watch), unless a waiter's watch is still set: the hold's
// one watch, and its czxid, the fencing token.
// It reports false, and grants nothing, if an error state came since that listing
// or the client has closed: the participant must look again (and a closed client's
// listing says ErrClosed). A node found gone is ErrNodeGone. The Held takes the
// Tracker over; on any other outcome the Tracker is stopped.
func (t *Tracker) grant(ctx context.Context, epoch int64, n *Node) (h *Held, ok bool, err error) {
	// The listener first, then the count: an error state published before the
	// listener hears nothing is in the count, and refuses the grant.
	policy := t.c.ForRecipes().ErrorPolicy()
	stopState := t.c.Listen(func(s framework.ConnectionState) {
		if policy.IsError(s) || s == framework.Lost {
			t.failed(stateCause(s))
		}
	})
	t.mu.Lock()
	t.stopState = stopState
	armed := t.armed
	t.mu.Unlock()
	// A waiter that expected to hold set the watch with its listing (wait): then the
	// grant reads nothing. Nor does it when the create's reply gave the node's czxid,
	// the fencing token: the watch is then set once the hold is recorded (rearm
	// below), and a deletion it finds ends the hold, as one heard later does.
	if !armed && !t.unwatched {
		t.follow(n)
		if n.Czxid != 0 {
			t.mu.Lock()
			t.token = n.Czxid
			t.mu.Unlock()
		} else if err := t.watch(ctx, n); err != nil {
			t.Stop()
			return nil, false, err
		}
	}
	if beforeHolding != nil {
		beforeHolding()
	}
	// The count is compared under t.mu, as failed reads holding: the listener's
	// failed ran before (its state is in the count), or runs once the hold is recorded.
	t.mu.Lock()
	if t.deleted {
		t.mu.Unlock()
		t.Stop()
		return nil, false, ErrNodeGone
	}
	if errorStates, _ := t.c.ForRecipes().StateChanges(); errorStates != epoch || t.c.ForRecipes().Context().Err() != nil {
		t.mu.Unlock()
		t.Stop()
		return nil, false, nil
	}
	defer t.mu.Unlock()
	t.lost = make(chan struct{})
	t.holding = true
	// A closed client says nothing more, but its session is gone with our node. Only
	// a holder follows the close this way, from here on: a waiter's next request says
	// ErrClosed, and a context.AfterFunc per waiter cost each waiter its registration
	// in the client's context (a thousand queued waiters, a thousand of them). A
	// close from now on, or already under way, runs failed at once and loses the hold.
	// The close also stops the hold's watch and listener: a hold lost that way and
	// never released keeps nothing of the closed client.
	t.stopClose = context.AfterFunc(t.c.ForRecipes().Context(), func() { t.failed(framework.ErrClosed); t.Stop() })
	t.since = t.observer.granted()
	if !t.armed && !t.unwatched {
		// The watch fired for a change of data before the hold was recorded
		// (dataChanged): set it again, or a later deletion goes unheard. rearm reads
		// the new data for a revocation request too.
		go t.rearm()
	} else if t.onRevoke != nil && t.revoke {
		go t.onRevoke() // asked before we held: it may well Release
	}
	return &Held{Node: n, token: t.token, c: t.c, t: t}, true, nil
}

// follow makes t hear the notifications of our node n, until Stop.
func (t *Tracker) follow(n *Node) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.node == nil {
		t.ctx, t.cancel = context.WithCancel(context.Background())
		t.node = n
		t.stopWatch, t.passWatch = watchNode(t.c, n.Path, t)
	}
}

// watch sets our node's data watch and reads the node: its czxid, the fencing token,
// and its data, for a revocation request. The node's notifications must be followed
// (follow) before the read: a deletion after the read's answer is heard, one before
// it is the read's ErrNoNode, reported as ErrNodeGone, as is a node of another
// session.
//
// GetW, not ExistsW: an exists that finds no node leaves a watch on it for the rest
// of the session. An ACL that refuses us READ on our own node refuses this too, and
// with it the hold: the grant, when it reads (no czxid from the create), or the
// hold at once (rearm), since its node could not be watched.
func (t *Tracker) watch(ctx context.Context, n *Node) error {
	t.mu.Lock()
	t.fired = false
	t.mu.Unlock()
	data, stat, _, err := t.c.GetW(ctx, n.Path)
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
	// it is set again (by grant, or by dataChanged for a holder).
	t.armed = !t.fired
	t.token, t.revoke = stat.Czxid, string(data) == RevokeMessage
	return nil
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
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = t.watch(ctx, n)
	}()
	fn()
	<-done
}

// ready says whether a grant need not read our node: its data watch is set and
// has not fired, or the holder does not watch it.
func (t *Tracker) ready() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.armed || t.unwatched
}

// rearm sets our node's data watch again once it has fired for a change of data,
// and reads the data for a revocation request, if the holder hears them. A deletion
// it finds is a deletion heard.
func (t *Tracker) rearm() {
	t.mu.Lock()
	ctx, n := t.ctx, t.node
	t.mu.Unlock()
	if n == nil {
		return // stopped
	}
	for ctx.Err() == nil {
		err := t.watch(ctx, n)
		switch {
		case errors.Is(err, ErrNodeGone):
			t.nodeDeleted()
			return
		case ctx.Err() != nil, errors.Is(err, framework.ErrClosed):
			return
		case errors.Is(err, framework.ErrSessionExpired):
			t.failed(ErrSessionExpired)
			return
		case err != nil && !framework.IsRetryable(err):
			// Refused (our node's ACL was changed): a hold whose node can no longer be
			// watched would not hear its deletion, so it is lost, as grant refuses it.
			t.c.ForRecipes().Logger().Warn("zkrecipes: cannot watch our node any more", "node", n.Path, "error", err)
			t.failed(fmt.Errorf("our node can no longer be watched: %w", err))
			return
		case err != nil: // a long outage: watch again once it is over
			if t.c.WaitConnected(ctx) != nil {
				return
			}
			continue
		}
		// Only for a hold still held: a reply that comes after Release must not ask the
		// participant's next hold to go.
		t.mu.Lock()
		revoke := t.revoke
		t.mu.Unlock()
		if t.onRevoke != nil && revoke && t.isHolding() && ctx.Err() == nil {
			go t.onRevoke() // it may well Release
		}
		return
	}
}

// isHolding says whether a hold was granted and has not been lost or ended.
func (t *Tracker) isHolding() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.holding && !hold.Ended(t.lost)
}

// dataChanged is told that our node's data watch fired for a change of data (on the
// client's receiving goroutine): a holder sets it again, off that goroutine, since
// that is a request; a grant under way does so once it has recorded the hold.
func (t *Tracker) dataChanged() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.armed, t.fired = false, true
	if t.holding && !hold.Ended(t.lost) {
		go t.rearm()
	}
}

// markLost closes lost with cause (nil: the hold's own end), and reports whether
// this call did.
func (t *Tracker) markLost(cause error) (closed bool) {
	t.lostOnce.Do(func() {
		t.mu.Lock()
		t.cause = cause
		calls := t.onLost
		t.onLost = nil
		close(t.lost)
		t.mu.Unlock()
		for f := range calls {
			(*f)()
		}
		closed = true
	})
	return closed
}

// whenLost calls f, which must not block, as the hold is lost or ends (at once if
// it has), on the goroutine that loses it; stop, before that, undoes it.
func (t *Tracker) whenLost(f func()) (stop func()) {
	t.mu.Lock()
	if hold.Ended(t.lost) {
		t.mu.Unlock()
		f()
		return func() {}
	}
	if t.onLost == nil {
		t.onLost = map[*func()]struct{}{}
	}
	key := &f
	t.onLost[key] = struct{}{}
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		delete(t.onLost, key)
		t.mu.Unlock()
	}
}

// Held is a node that holds: a lock, a lease, a leadership.
type Held struct {
	Node  *Node
	token int64
	c     *framework.Client
	t     *Tracker

	releaseOnce sync.Once
}

// Lost closes when the hold may have been lost (the client's error policy counted a
// connection state as an error, the client closed, or our node was deleted), and on
// the hold's end. It never reopens; Cause says why it closed.
func (h *Held) Lost() <-chan struct{} { return h.t.lost }

// Holds reports whether the hold is still held: Lost has not closed.
func (h *Held) Holds() bool { return !hold.Ended(h.t.lost) }

// Cause says why the hold was lost: an error wrapping ErrNodeDeleted,
// ErrSessionExpired, ErrSuspended or framework.ErrClosed; nil while it holds, and
// after a release or Forget that came before any loss.
func (h *Held) Cause() error {
	h.t.mu.Lock()
	defer h.t.mu.Unlock()
	return h.t.cause
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
	stop := h.t.whenLost(func() {
		cause := lost
		if why := h.Cause(); why != nil {
			cause = fmt.Errorf("%w: %w", lost, why)
		}
		cancel(cause)
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
	err := ErrLost
	h.releaseOnce.Do(func() { err = h.release(ctx) })
	return err
}

func (h *Held) release(ctx context.Context) error {
	h.t.Stop()
	// A new session, or none after a Lost: ours ended, perhaps unheard (a process
	// paused past its session timeout), whatever the hold heard first.
	if sid := h.c.SessionID(); (sid != 0 && sid != h.Node.Session) || (sid == 0 && h.c.State() == framework.Lost) {
		h.t.failed(ErrSessionExpired)
	}
	lost := h.Cause()
	h.t.end()
	err := h.Node.Delete(ctx, h.c)
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
	h.releaseOnce.Do(func() {
		h.t.Stop()
		h.t.end()
	})
}

// Pass is Forget, and returns a Tracker for the participant's next hold on the same
// node (Queue.Await), which keeps following the node and its watch: a watch still
// set is not set again, so a latch that loses and regains its leadership on the same
// node adds no watch of go-zookeeper's each term. It returns nil if the hold had
// ended already. Stop the Tracker unless a hold takes it over.
func (h *Held) Pass() (next *Tracker) {
	h.releaseOnce.Do(func() {
		t := h.t
		next = &Tracker{c: t.c, observer: t.observer, onRevoke: t.onRevoke, unwatched: t.unwatched}
		t.mu.Lock()
		if t.passWatch != nil {
			t.passWatch(next)
			next.node, next.ctx, next.cancel, next.stopWatch, next.passWatch = t.node, t.ctx, t.cancel, t.stopWatch, t.passWatch
			next.armed, next.fired, next.token, next.revoke, next.deleted = t.armed, t.fired, t.token, t.revoke, t.deleted
			t.node, t.ctx, t.cancel, t.stopWatch, t.passWatch = nil, nil, nil, nil, nil
		}
		t.mu.Unlock()
		t.Stop()
		t.end()
	})
	return next
}
