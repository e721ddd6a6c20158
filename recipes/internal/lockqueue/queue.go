package lockqueue

import (
	"context"
	"errors"
	"fmt"
	"path"
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
	names         []string // every participant name on the path, name among them
	rule          Rule
	watchChildren bool
	observer      *Observer // nil: nothing hears the queue
}

// New is the queue of the participants at path, whose nodes we name name ("lock-",
// before the server's sequence number), and whom rule lets hold.
func New(c *framework.Client, path, name string, rule Rule, opts ...QueueOption) *Queue {
	q := &Queue{client: c, path: path, name: name, names: []string{name}, rule: rule}
	for _, opt := range opts {
		opt(q)
	}
	return q
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
	return createNode(ctx, q.client, path.Join(q.path, q.name), data, framework.Sequential())
}

// Options of one acquisition.
type Options struct {
	Wait     bool   // wait for the hold; else give up with ErrWouldBlock
	OnRevoke func() // if set, called when another client asks us to release
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
		if n, err = q.Join(ctx, data); err == nil {
			a.queued(n)
			if o.Queued != nil {
				o.Queued()
				o.Queued = nil
			}
			if h, err = q.wait(ctx, n, nil, o.Wait, o.OnRevoke); err == nil {
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
	n, err := createNode(ctx, q.client, path.Join(q.path, q.name+seq), data)
	if err != nil {
		return nil, err
	}
	h, ok, err := t.grant(ctx, epoch, n)
	if err == nil && !ok {
		err = ErrLost
	}
	if err != nil {
		n.Delete(ctx, q.client)
		return nil, err
	}
	return h, nil
}

// Await waits until our existing node n holds (a latch's wait for leadership, which
// keeps its node across the terms it loses): an acquisition of its own, as the
// observer sees it. t must have been started (q.Track) before Await is called. It
// returns ErrNodeGone when n vanished or belongs to an earlier session; it deletes
// nothing.
func (q *Queue) Await(ctx context.Context, n *Node, t *Tracker, wait bool) (h *Held, err error) {
	a := q.observer.Begin(ctx, q.path, wait)
	defer func() { a.End(h, err) }()
	a.queued(n)
	return q.wait(ctx, n, t, wait, nil)
}

// wait is the loop of the lock queue for node n: list, ask the rule, watch one node,
// wait, until n holds. The hold is granted through t, or, if t is nil, through a
// Tracker made then (hearing onRevoke): a queued waiter keeps none.
func (q *Queue) wait(ctx context.Context, n *Node, t *Tracker, wait bool, onRevoke func()) (*Held, error) {
	for {
		// Taken before the listing: an error state after it refuses the grant, and any
		// change after it wakes the wait below.
		epoch, changedState := q.client.ForRecipes().StateChanges()
		var children []string
		var changed <-chan framework.Event
		var err error
		if q.watchChildren && wait {
			children, _, changed, err = q.client.ChildrenW(ctx, q.path)
		} else {
			children, _, err = q.client.Children(ctx, q.path)
		}
		if errors.Is(err, framework.ErrNoNode) {
			return nil, ErrNodeGone
		}
		if err != nil {
			return nil, err
		}
		if sid := q.client.SessionID(); sid != n.Session {
			if sid == 0 {
				continue // no session now: the next listing waits for one
			}
			return nil, ErrNodeGone
		}
		holds, watch, err := decide(children, q.names, n.Name(), q.rule)
		if err != nil {
			return nil, err
		}
		if holds {
			tracker := t
			if tracker == nil {
				tracker = q.Track()
				tracker.onRevoke = onRevoke
			}
			h, ok, err := tracker.grant(ctx, epoch, n)
			if err != nil || ok {
				return h, err
			}
			continue
		}
		if !wait {
			return nil, ErrWouldBlock
		}
		if !q.watchChildren {
			_, _, changed, err = q.client.GetW(ctx, path.Join(q.path, watch))
			if errors.Is(err, framework.ErrNoNode) {
				continue
			}
			if err != nil {
				return nil, err
			}
		}
		// Each case costs the parked waiter a runtime record of its own (a sudog, 112
		// bytes), so the client's close is not one: it closes changedState too, and the
		// next listing says ErrClosed.
		select {
		case <-changed:
		case <-changedState:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for %s: %w", q.path, ctx.Err())
		}
	}
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
