package election

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/notify"
	"github.com/zkrecipes/zkrecipes/recipes/internal/attempt"
	"github.com/zkrecipes/zkrecipes/recipes/internal/hold"
	"github.com/zkrecipes/zkrecipes/recipes/internal/lifecycle"
	"github.com/zkrecipes/zkrecipes/recipes/internal/lockqueue"
)

const latchName = "latch-"

// Latch is one participant of a leader election that stays in it until Close.
type Latch struct {
	c             *framework.Client
	q             *lockqueue.Queue
	id            []byte
	notifyOnClose bool

	mu      sync.Mutex
	state   lifecycle.Lifecycle // moved under mu, with the fields Start and Close set
	leader  bool
	hold    *lockqueue.Held // the current term of leadership, while leader
	node    *lockqueue.Node
	changed chan struct{}      // closed and replaced on every change of leader or closed
	stop    context.CancelFunc // ends the election loop
	done    chan struct{}      // closed when the loop has ended

	// listeners hear the changes on a goroutine of their own: the loop never waits for
	// them, so it follows the election while a listener blocks, and Close, waiting
	// only for the loop, may be called from a listener.
	listeners *notify.Listeners[bool]
}

// NewLatch makes a participant in the election at path. Nothing is sent to ZooKeeper
// until Start.
func NewLatch(c *framework.Client, path string, opts ...Option) (*Latch, error) {
	o, err := newOptions(c, path, opts)
	if err != nil {
		return nil, err
	}
	return &Latch{
		c:             c,
		q:             lockqueue.New(c, path, latchName, lockqueue.Exclusive, lockqueue.HandOverOnNotification(), lockqueue.Observed(lockqueue.ObserveElection(c, "latch"))),
		id:            []byte(o.id),
		notifyOnClose: o.notifyOnClose,
		changed:       make(chan struct{}),
		listeners:     notify.New[bool](),
	}, nil
}

// Start joins the election: it returns once our node exists (waiting for a
// connection if need be), and the latch then follows the election in the background
// until Close. If ctx ends first, or Close is called meanwhile, no node is left.
func (l *Latch) Start(ctx context.Context) error {
	l.mu.Lock()
	if err := l.state.Start(ErrStarted, ErrClosed); err != nil {
		l.mu.Unlock()
		return err
	}
	loopCtx, stop := lifecycle.Context(l.c)
	l.stop, l.done = stop, make(chan struct{})
	l.mu.Unlock()

	createCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { // Close during the create cancels it
		select {
		case <-loopCtx.Done():
			cancel()
		case <-createCtx.Done():
		}
	}()
	n, err := l.q.Join(createCtx, l.id)
	if err != nil {
		if cause := context.Cause(loopCtx); errors.Is(cause, framework.ErrClosed) {
			err = cause // the client closed while the create waited
		}
		stop()
		close(l.done)
		l.mu.Lock()
		defer l.mu.Unlock()
		if !l.state.Unstart() {
			return ErrClosed
		}
		l.stop, l.done = nil, nil // not joined: Start may be tried again
		return fmt.Errorf("election: joining %s: %w", l.q.Path(), err)
	}
	l.mu.Lock()
	l.node = n
	l.mu.Unlock()
	go l.run(loopCtx, n)
	return nil
}

// run follows the election until ctx ends: Close, or the client's close.
func (l *Latch) run(ctx context.Context, n *lockqueue.Node) {
	defer close(l.done)
	go l.listeners.Run(nil)
	defer l.listeners.End() // after the last change, the loop's own end of leadership
	pauses := &attempt.Pauses{Client: l.c}
	rejoin := false             // our node went after a term or a join: join again at once, once
	var next *lockqueue.Tracker // the last term's: it follows our node still
	defer func() {
		if next != nil {
			next.Stop()
		}
	}()
	for ctx.Err() == nil {
		t := next
		next = nil
		if t == nil || n == nil {
			if t != nil {
				t.Stop()
			}
			t = l.q.Track()
		}
		if n == nil {
			var err error
			if n, err = l.q.Join(ctx, l.id); err != nil {
				t.Stop()
				l.pause(ctx, pauses, err)
				continue
			}
			l.mu.Lock()
			l.node = n
			l.mu.Unlock()
		}
		h, err := l.q.Await(ctx, n, t, true)
		if err != nil {
			t.Stop()
			if errors.Is(err, lockqueue.ErrNodeGone) {
				n.Delete(ctx, l.c) // an earlier session's node is nobody's: let it go now
				n = nil
				l.mu.Lock()
				l.node = nil
				l.mu.Unlock()
				if rejoin {
					rejoin = false
					continue
				}
			}
			l.pause(ctx, pauses, err)
			continue
		}
		rejoin = true
		pauses.Reset()
		l.setLeader(h)
		select {
		case <-h.Lost(): // an error state, or the client closed
		case <-ctx.Done():
		}
		next = h.Pass() // our node's watch, still set, serves the next term
		l.setLeader(nil)
		// Look at our node again once a session is back: if it is the same session, we
		// keep our place; if not, Await finds the node gone and we join anew.
		_ = l.c.WaitConnected(ctx)
	}
}

// pause waits between two failed attempts to follow the election, as the client's
// retry policy says, and without end: a latch never gives up until Close.
func (l *Latch) pause(ctx context.Context, pauses *attempt.Pauses, err error) {
	if ctx.Err() != nil {
		return
	}
	l.c.ForRecipes().Logger().Debug("zkrecipes: latch retrying", "path", l.q.Path(), "error", err)
	pauses.Wait(ctx, nil)
}

// setLeader records a change of leadership, to the term h (nil: not leading), and
// queues it for the listeners (Close's end of leadership only with NotifyOnClose), in
// the order of the changes.
func (l *Latch) setLeader(h *lockqueue.Held) {
	l.mu.Lock()
	defer l.mu.Unlock()
	leader := h != nil
	closed := l.state.State() == lifecycle.Closed
	if l.leader == leader || (leader && closed) {
		// A grant that came as Close began is no term: Close ended it, and has deleted
		// or is deleting our node, so the next leader may lead already.
		return
	}
	l.leader, l.hold = leader, h
	close(l.changed)
	l.changed = make(chan struct{})
	if !closed || l.notifyOnClose {
		l.listeners.Push(leader)
	}
}

// Await blocks until this latch leads, ctx ends, the latch is closed (ErrClosed) or
// its client is (an error wrapping framework.ErrClosed). A ctx that has ended already
// gives ctx's error (wrapped) even while the latch leads, as the standard library's
// calls do: a loop around Await ends with its ctx.
func (l *Latch) Await(ctx context.Context) error {
	for {
		l.mu.Lock()
		leader, state, ch := l.leading(), l.state.State(), l.changed
		l.mu.Unlock()
		switch {
		case state == lifecycle.Closed:
			return ErrClosed
		case state == lifecycle.Latent:
			return ErrNotStarted
		case ctx.Err() != nil:
			return l.awaitEnded(ctx)
		case leader:
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return l.awaitEnded(ctx)
		case <-l.c.ForRecipes().Context().Done():
			return lifecycle.ClientClosed(l.c, "election: awaiting leadership of "+l.q.Path())
		}
	}
}

// awaitEnded is Await's error for a ctx that has ended.
func (l *Latch) awaitEnded(ctx context.Context) error {
	return fmt.Errorf("election: awaiting leadership of %s: %w", l.q.Path(), ctx.Err())
}

// IsLeader reports whether this latch leads now.
func (l *Latch) IsLeader() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.leading()
}

// leading is the loop's word on leadership, unless the term it granted has already
// ended and the loop has not yet heard: a term's end is the loss, at once. l.mu is
// held.
func (l *Latch) leading() bool {
	if !l.leader || l.state.State() == lifecycle.Closed {
		return false
	}
	return l.hold.Holds()
}

// Listen registers fn to hear every change of this latch's leadership: true when it
// starts leading, false when it stops, alternating. Calls come one at a time, in
// order, on a goroutine of the latch's that the election never waits for: while fn
// blocks, the latch goes on following the election (IsLeader, Context and
// FencingToken tell the present, which may be ahead of the call being heard), and
// later changes wait for fn. fn may call Close. stop unregisters fn, and may be
// called from within fn.
func (l *Latch) Listen(fn func(isLeader bool)) (stop func()) {
	return l.listeners.Listen(fn)
}

// Leader asks ZooKeeper who leads now: ErrNoLeader when nobody takes part.
func (l *Latch) Leader(ctx context.Context) (Participant, error) {
	ps, err := l.q.Participants(ctx)
	if err != nil {
		return Participant{}, fmt.Errorf("election: leader of %s: %w", l.q.Path(), err)
	}
	return leader(ps)
}

// Participants lists the election in queue order, the leader first, with ids.
func (l *Latch) Participants(ctx context.Context) ([]Participant, error) {
	ps, err := l.q.Participants(ctx)
	if err != nil {
		return nil, fmt.Errorf("election: participants of %s: %w", l.q.Path(), err)
	}
	return participants(ps), nil
}

// Node is the path of our node in the election while the latch takes part, else "".
func (l *Latch) Node() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.node == nil || l.state.State() == lifecycle.Closed {
		return ""
	}
	return l.node.Path
}

// Context returns a copy of parent that ends when this latch's current term of
// leadership ends: leadership may have been lost (the error policy counted a
// connection state as an error, or our node was deleted), or Close. Its
// context.Cause then wraps ErrNotLeader and says why; if the latch does not lead at
// the call, it has ended already when Context returns. Run the leader's
// work under it; a Selector does this for you. Call the CancelFunc when the work is
// over.
func (l *Latch) Context(parent context.Context) (context.Context, context.CancelFunc) {
	l.mu.Lock()
	var term *lockqueue.Held
	if l.leader && l.state.State() != lifecycle.Closed {
		term = l.hold
	}
	l.mu.Unlock()
	cause := fmt.Errorf("%w: %s", ErrNotLeader, l.q.Path())
	if term == nil {
		return hold.Context(parent, cause, hold.Closed)
	}
	return term.Context(parent, cause)
}

// FencingToken grows with every term of leadership of this election, while this
// latch leads; else 0.
func (l *Latch) FencingToken() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.leading() {
		return 0
	}
	return l.hold.FencingToken()
}

// Close leaves the election: leadership ends and our node is deleted, in the
// background if the connection is down. Close waits for the latch to stop following
// the election, never for a listener, so a listener may call it. Listeners hear the
// changes made before Close, and the end of leadership Close makes only with
// NotifyOnClose; a listener running when Close returns hears those after it returns,
// and nothing else follows them. A second Close returns nil.
func (l *Latch) Close(ctx context.Context) error {
	l.mu.Lock()
	was := l.state.Close()
	if was == lifecycle.Closed {
		l.mu.Unlock()
		return nil
	}
	started, stop, done, hold := was == lifecycle.Started, l.stop, l.done, l.hold
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
	if !started {
		return nil
	}
	stop()
	// As Curator does, the delete goes out at once, not after the loop has wound down:
	// the next leader waits for it. Our term ends first, so that no two terms overlap.
	if hold != nil {
		hold.Forget()
	}
	err := l.leave(ctx)
	<-done
	// The loop may have made a node meanwhile (it joins anew after a session loss).
	return errors.Join(err, l.leave(ctx))
}

// leave deletes our node, if we have one.
func (l *Latch) leave(ctx context.Context) error {
	l.mu.Lock()
	n := l.node
	l.node = nil
	l.mu.Unlock()
	if n == nil {
		return nil
	}
	err := n.Delete(ctx, l.c)
	if err == nil || errors.Is(err, framework.ErrDeleteInBackground) || errors.Is(err, framework.ErrClosed) || isNoNode(err) {
		return nil // with a closed client, the session took the node
	}
	return fmt.Errorf("election: leaving %s: %w", l.q.Path(), err)
}
