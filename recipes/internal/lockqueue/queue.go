package lockqueue

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/zkrecipes/zkrecipes/framework"
)

// ErrWouldBlock is returned by a non-waiting Acquire when another participant holds.
var ErrWouldBlock = errors.New("held by another participant")

// Queue is the participants of one lock path.
type Queue struct {
	client        *framework.Client
	path          string   // the lock's path, whose children are the participants
	name          string   // our nodes' name, before the sequence number: "lock-"
	prefix        string   // path/name: our nodes' path, before the sequence number
	names         []string // every participant name on the path, name among them
	rule          Rule
	watchChildren bool
	handOver      bool      // HandOverOnNotification
	unwatched     bool      // Unwatched
	watchQueued   bool      // WatchOwnNodeWhileQueued
	onRevoke      func()    // OnRevoke
	observer      *Observer // nil: nothing hears the queue
	holdersOnce   sync.Once
	hs            *holders // the client's, once a participant follows its node: see holders
}

// New is the queue of the participants at path, whose nodes we name name ("lock-",
// before the server's sequence number), and whom rule lets hold.
func New(c *framework.Client, path, name string, rule Rule, opts ...QueueOption) *Queue {
	q := &Queue{client: c, path: path, name: name, names: []string{name}, rule: rule, prefix: nodePrefix(path, name)}
	for _, opt := range opts {
		opt(q)
	}
	return q
}

func nodePrefix(dir, name string) string { return path.Join(dir, name) }

// holders is q's client's holders, registered with the client (a subscriber, a
// listener, a close call, for as long as the client lives) only once a participant
// of q follows its node: a queue made and never used, on a namespaced view made for
// one request say, leaves nothing behind on the client.
func (q *Queue) holders() *holders {
	q.holdersOnce.Do(func() { q.hs = holdersOf(q.client) })
	return q.hs
}

// QueueOption configures a Queue.
type QueueOption func(*Queue)

// Names are the names of every participant on the path, ours among them, when
// others than ours queue there too (a read/write lock's readers and writers): a
// node's sequence is what follows the last occurrence of the first of them that its
// name contains. Default: ours alone.
func Names(names ...string) QueueOption { return func(q *Queue) { q.names = names } }

// WatchChildren makes a waiter watch the path's children instead of the node the
// rule names: for a counting rule, under which any release may let us in. Only one
// waiter may wait so (Curator's semaphore serialises them with a lock), or a release
// wakes a herd. Default: watch the node the rule names.
func WatchChildren() QueueOption { return func(q *Queue) { q.watchChildren = true } }

// HandOverOnNotification says that the rule is Exclusive and that every participant
// node is made sequential: then a waiter whose watched node was the first of its
// last listing holds on that node's deletion, with no listing (see Queue.wait). Not
// for a read/write lock, whose downgrade makes a node at an old sequence. Default:
// a waiter lists again after every notification.
func HandOverOnNotification() QueueOption { return func(q *Queue) { q.handOver = true } }

// Unwatched makes a holder not watch its own node: its hold ends on an error state
// or the client's close, not on its node's deletion, and it has no fencing token
// (0). For a lock whose loss is harmless, which a recipe argues (the semaphore's
// internal lock): it saves the holder's watch, a request. Default: a holder watches
// its node.
func Unwatched() QueueOption { return func(q *Queue) { q.unwatched = true } }

// WatchOwnNodeWhileQueued makes every waiter set its own node's watch (the one it
// needs once it holds) with its first watch on the node ahead, in the same write,
// not only the waiter next in line: for a lock whose waits are short and many (a
// mutex, a read/write lock), where a waiter further back would otherwise send it
// after its wake, beside its listing. It costs a server watch per queued waiter.
// Default: the waiter next in line sets it (a latch, whose candidates wait long).
func WatchOwnNodeWhileQueued() QueueOption { return func(q *Queue) { q.watchQueued = true } }

// OnRevoke makes f be called when another client asks a holder of the queue to
// release (Curator's Revoker writes RevokeMessage into its node). Default: nothing
// hears it.
func OnRevoke(f func()) QueueOption { return func(q *Queue) { q.onRevoke = f } }

// Observed makes o hear the queue's acquisitions and holds. Default: nothing hears
// them (a semaphore's internal lock).
func Observed(o *Observer) QueueOption { return func(q *Queue) { q.observer = o } }

// Path is the lock's path.
func (q *Queue) Path() string { return q.path }

// Join makes our protected ephemeral-sequential node in the queue, path/name<seq>,
// with container parents, and learns which session owns it. Acquire joins and waits;
// a participant that keeps its node across its holds (a latch) joins once, then
// waits with Await.
func (q *Queue) Join(ctx context.Context, data []byte) (*Node, error) {
	return q.joinTraced(ctx, data, nil)
}

func (q *Queue) joinTraced(ctx context.Context, data []byte, trace *framework.CreateTrace) (*Node, error) {
	return createNode(ctx, q.client, q.prefix, data, trace, framework.Sequential())
}

// Options of one acquisition.
type Options struct {
	Wait bool // wait for the hold; else give up with ErrWouldBlock
	// Queued, if set, is called once our first node exists, before the wait: a
	// caller that returns at that point learns of a refusal (an ACL, a bad path)
	// from Acquire's error, yet does not wait for the hold.
	Queued func()
}

// Acquire creates our node and waits until the rule says it holds, ctx ends, or the
// client closes. Whatever the failure, our node is deleted before it returns.
func (q *Queue) Acquire(ctx context.Context, data []byte, o Options) (h *Held, err error) {
	a := q.observer.Begin(ctx, q.path, o.Wait)
	defer func() { a.End(h, err) }()
	var restarts backoff.BackOff
	for {
		var n *Node
		var l snapshot
		if n, l, err = q.join(ctx, data, o.Wait); err == nil {
			a.queued(n)
			if o.Queued != nil {
				o.Queued()
				o.Queued = nil
			}
			if h, err = q.wait(ctx, n, nil, o.Wait, &l); err == nil {
				return h, nil
			}
			n.Delete(ctx, q.client)
		}
		if !errors.Is(err, ErrNodeGone) {
			return nil, err
		}
		// Our node went with its session: start again in the new one, as the client's
		// retry policy allows.
		if restarts == nil {
			restarts = q.client.ForRecipes().RetryPolicy().NewBackOff()
		}
		pause := restarts.NextBackOff()
		if pause == backoff.Stop {
			return nil, err
		}
		if err = sleep(ctx, pause); err != nil {
			return nil, err
		}
	}
}

// HoldAt holds at once with a node named name+seq, not sequential, so that it sorts
// in the place of an existing node of ours with sequence seq. That is Curator's
// downgrade: a read lock taken under its own write lock stands where the write lock
// stood, and writers queued behind stay behind when the write lock goes (CURATOR-621).
// Its fencing token is its own node's czxid, like every hold's.
func (q *Queue) HoldAt(ctx context.Context, data []byte, seq string) (h *Held, err error) {
	a := q.observer.Begin(ctx, q.path, false)
	defer func() { a.End(h, err) }()
	t := q.Track()
	epoch := t.epoch()
	n, err := createNode(ctx, q.client, path.Join(q.path, q.name+seq), data, nil)
	if err != nil {
		return nil, err
	}
	h, ok, err := t.grant(ctx, epoch, n)
	if err == nil && !ok {
		err = ErrLost
	}
	if err != nil {
		t.Stop()
		n.Delete(ctx, q.client)
		return nil, err
	}
	return h, nil
}

// Await waits until our existing node n holds (a latch's wait for leadership, which
// keeps its node across the terms it loses): an acquisition of its own, as the
// observer sees it, through t (q.Track, or the last hold's Pass), which it leaves
// following n. It returns ErrNodeGone when n vanished or belongs to an earlier
// session; it deletes nothing.
func (q *Queue) Await(ctx context.Context, n *Node, t *Tracker, wait bool) (h *Held, err error) {
	a := q.observer.Begin(ctx, q.path, wait)
	defer func() { a.End(h, err) }()
	a.queued(n)
	return q.wait(ctx, n, t, wait, nil)
}

// snapshot is one look at the queue: the children, and the client's states around it.
type snapshot struct {
	epoch        int64           // error states before it (grant)
	changedState <-chan struct{} // closes on the next state after it
	children     []string
	changed      <-chan framework.Event // the children's watch (WatchChildren)
	err          error
}

// list lists the queue, with a watch on its children for a waiting counting rule.
func (q *Queue) list(ctx context.Context, wait bool) (l snapshot) {
	// Taken before the listing: an error state after it refuses the grant, and any
	// change after it wakes the wait.
	l.epoch, l.changedState = q.client.ForRecipes().StateChanges()
	if q.watchChildren && wait {
		l.children, _, l.changed, l.err = q.client.ChildrenW(ctx, q.path)
	} else {
		l.children, _, l.err = q.client.Children(ctx, q.path)
	}
	if errors.Is(l.err, framework.ErrNoNode) {
		l.err = ErrNodeGone
	}
	return l
}

// join makes our node (Join) and lists the queue in the same write (see
// framework.CreateTrace.ListAfter): an uncontended acquisition is then one round
// trip, the create's reply giving the fencing token, and the server gets the
// listing after the create. A listing that lacks our node all the same (the
// create's first attempt was lost and retried) is listed again (wait); where the
// listing could not go with the create, the queue is listed once it is made.
func (q *Queue) join(ctx context.Context, data []byte, wait bool) (*Node, snapshot, error) {
	var trace framework.CreateTrace
	trace.ListAfter(q.path, q.watchChildren && wait)
	var l snapshot
	l.epoch, l.changedState = q.client.ForRecipes().StateChanges() // before the listing: see list
	n, err := q.joinTraced(ctx, data, &trace)
	if err != nil {
		return nil, l, err
	}
	children, changed, ok, err := trace.Listing(ctx)
	if !ok {
		return n, q.list(ctx, wait), nil
	}
	l.children, l.changed, l.err = children, changed, err
	if errors.Is(l.err, framework.ErrNoNode) {
		l.err = ErrNodeGone
	}
	return n, l, nil
}

// wait is the loop of the lock queue for node n: list, ask the rule, watch one node,
// wait, until n holds. The hold is granted through t; a nil t is made once the
// waiter expects to hold (a queued waiter keeps none), and stopped here if the wait
// fails. first, if not nil, is a listing made with our node's create, which may lack
// our node.
//
// A waiter whose watched node is the first of its listing will likely hold when
// that node goes: it sets its own node's watch (the holder's watch) in the same
// write as its watch on that node (watchAhead), so that the grant reads nothing
// after; where the queue says so, every waiter does (WatchOwnNodeWhileQueued). A
// waiter woken by a deletion without it sets it with its next listing; one that
// holds without it (at its first listing) sets it once it holds, in a flight the
// grant does not wait for.
//
// Where the queue allows it (HandOverOnNotification), such a waiter holds on the
// notification of that node's deletion itself, with no listing. The argument: under
// a parent that holds our node (so the parent is not remade, and its counter only
// grows), every node made after our listing gets a sequence above ours, so nothing
// can come ahead of us; the one node ahead of us was the first, and it is gone. It
// holds only while our session, and so our node, still stands: grant refuses when
// an error state came since our listing (an expiry, a lost connection), or when our
// node's deletion was heard. It does not hold, and the waiter lists again, where a
// node can appear ahead of ours: a read/write lock, whose downgrade makes a node at
// an old sequence (so not HandOverOnNotification); a sequence counter that wrapped
// between the nodes listed, or children that are not the recipe's (some other
// writer making nodes there), where decide does not call the watched node first.
func (q *Queue) wait(ctx context.Context, n *Node, t *Tracker, wait bool, first *snapshot) (_ *Held, err error) {
	if t == nil {
		defer func() {
			if err != nil && t != nil {
				t.Stop()
			}
		}()
	}
	armNext := false // set our node's watch with the next listing
	var l snapshot
	for joined := first != nil; ; joined = false { // joined: l is the listing made with our create
		if joined {
			l, *first, first = *first, snapshot{}, nil // not kept while waiting: its children may be many
		} else {
			t = q.tracking(t, armNext)
			t.watchWith(ctx, n, armNext, func() { l = q.list(ctx, wait) })
		}
		if errors.Is(l.err, ErrNodeGone) && joined {
			continue // listed before the create made the lock's path: list again
		}
		if l.err != nil {
			return nil, l.err
		}
		if sid := q.client.SessionID(); sid != n.Session {
			if sid == 0 {
				continue // no session now: the next listing waits for one
			}
			return nil, ErrNodeGone
		}
		holds, watch, ahead, err := decide(l.children, q.names, n.Name(), q.rule)
		if errors.Is(err, ErrNodeGone) && joined {
			// The listing reached the server before the create: list again. Nothing in
			// it tells what came between the two (its cversion, compared with our
			// sequence, was tried: after deletes under the path the two can agree while
			// other nodes came between).
			continue
		}
		// Nothing of the listing is kept while waiting but these: its children may
		// be many, and a queued waiter's memory is what a long queue costs.
		epoch, changedState, changed := l.epoch, l.changedState, l.changed
		l = snapshot{}
		if err != nil {
			return nil, err
		}
		if holds {
			t = q.tracking(t, true)
			h, ok, err := t.grant(ctx, epoch, n)
			if err != nil || ok {
				return h, err
			}
			continue
		}
		if !wait {
			return nil, ErrWouldBlock
		}
		expect := ahead || q.watchChildren
		if changed == nil {
			t, changed, err = q.watchAhead(ctx, t, n, expect, path.Join(q.path, watch))
		} else { // the children's watch came with the listing: ours alone, if expected
			t = q.tracking(t, expect)
			t.watchWith(ctx, n, expect, func() {})
		}
		if errors.Is(err, framework.ErrNoNode) {
			armNext = true // gone already: we may well hold
			continue
		}
		if err != nil {
			return nil, err
		}
		// Each case costs the parked waiter a runtime record of its own (a sudog, 112
		// bytes), so the client's close is not one: it closes changedState too, and the
		// next listing says ErrClosed.
		select {
		case ev, ok := <-changed:
			if !ok {
				// The watch ended with its connection, before the client's state says
				// so: list again once it has (the listing then waits for a
				// connection, as after any state change), not on the ended one.
				select {
				case <-changedState:
				case <-ctx.Done():
					return nil, fmt.Errorf("waiting for %s: %w", q.path, ctx.Err())
				}
				armNext = false
				continue
			}
			if q.handOver && ahead && ev.Type == framework.EventNodeDeleted && t.ready() {
				h, ok, err := t.grant(ctx, epoch, n)
				if err != nil || ok {
					return h, err
				}
			}
			// The node we waited on is gone: we may well hold after the next listing.
			armNext = ev.Type == framework.EventNodeDeleted
		case <-changedState:
			armNext = false
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for %s: %w", q.path, ctx.Err())
		}
	}
}

// watchAhead sets the waiter's watch on the node ahead, for this connection only (see
// framework.Plumbing.WatchData): a lost connection changes the client's state, which
// wakes the wait and lists again anyway. With it, in the same write, it sets our own
// node's watch, the one we must have once we hold (Tracker.armWith), if we expect to
// hold soon (expect), or whatever our place if the queue says so
// (WatchOwnNodeWhileQueued): else a waiter woken by a deletion sets it with its next
// listing. A waiter that cannot set both so sets ours beside the listing, once it
// expects to hold.
func (q *Queue) watchAhead(ctx context.Context, t *Tracker, n *Node, expect bool, ahead string) (*Tracker, <-chan framework.Event, error) {
	if !q.unwatched && (expect || q.watchQueued) && (t == nil || !t.ready()) {
		t = q.tracking(t, true)
		t.follow(n)
		changed, ok, err := t.armWith(ctx, n, ahead)
		if ok || err != nil || changed != nil {
			return t, changed, err
		}
	}
	t = q.tracking(t, expect)
	var changed <-chan framework.Event
	var err error
	t.watchWith(ctx, n, expect, func() {
		changed, err = q.client.ForRecipes().WatchData(ctx, q.client, ahead)
	})
	return t, changed, err
}

// tracking is t, or, if nil and needed, a new Tracker.
func (q *Queue) tracking(t *Tracker, needed bool) *Tracker {
	if t == nil && needed {
		return q.Track()
	}
	return t
}

// Participant is a node in the queue.
type Participant struct {
	Node   string // its path
	ID     string // its data: the participant's id
	Holder bool   // whether the rule lets it hold
	// FencingToken is its node's czxid: the token the participant has while it
	// holds (Held.FencingToken).
	FencingToken int64
}

// Participants lists the queue in order, holders first.
func (q *Queue) Participants(ctx context.Context) ([]Participant, error) {
	children, _, err := q.client.Children(ctx, q.path)
	if errors.Is(err, framework.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	sorted, holds := Order(children, q.names, q.rule)
	ps := make([]Participant, 0, len(sorted))
	for i, name := range sorted {
		p := path.Join(q.path, name)
		data, stat, err := q.client.Get(ctx, p)
		if errors.Is(err, framework.ErrNoNode) {
			continue // left while we listed
		}
		if err != nil {
			return nil, err
		}
		ps = append(ps, Participant{Node: p, ID: string(data), Holder: holds[i], FencingToken: stat.Czxid})
	}
	return ps, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
