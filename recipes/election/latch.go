package election

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/internal/lockqueue"
)

const latchName = "latch-"

// Latch is one participant of a leader election that stays in it until Close.
type Latch struct {
	c             *framework.Client
	q             *lockqueue.Queue
	id            []byte
	notifyOnClose bool

	mu        sync.Mutex
	started   bool
	closed    bool
	leader    bool
	token     int64
	term      <-chan struct{} // closes when the current term of leadership ends
	node      *lockqueue.Node
	changed   chan struct{} // closed and replaced on every change of leader or closed
	listeners map[int]func(bool)
	nextID    int
	stop      context.CancelFunc // ends the election loop
	done      chan struct{}      // closed when the loop has ended

	notify    sync.Mutex    // listeners hear changes one at a time, in order
	deliverer atomic.Uint64 // the goroutine calling listeners now, or 0
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
		q:             &lockqueue.Queue{Client: c, Path: path, Name: latchName, Names: []string{latchName}, Rule: lockqueue.Exclusive},
		id:            []byte(o.id),
		notifyOnClose: o.notifyOnClose,
		changed:       make(chan struct{}),
		listeners:     map[int]func(bool){},
	}, nil
}

// Start joins the election: it returns once our node exists (waiting for a
// connection if need be), and the latch then follows the election in the background
// until Close. If ctx ends first, or Close is called meanwhile, no node is left.
func (l *Latch) Start(ctx context.Context) error {
	l.mu.Lock()
	switch {
	case l.closed:
		l.mu.Unlock()
		return ErrClosed
	case l.started:
		l.mu.Unlock()
		return ErrStarted
	}
	l.started = true
	loopCtx, stop := context.WithCancel(context.Background())
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
	n, err := lockqueue.CreateNode(createCtx, l.c, l.q.Path, latchName, l.id)
	if err != nil {
		stop()
		close(l.done)
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.closed {
			return ErrClosed
		}
		l.started, l.stop, l.done = false, nil, nil // not joined: Start may be tried again
		return fmt.Errorf("election: joining %s: %w", l.q.Path, err)
	}
	l.mu.Lock()
	l.node = n
	l.mu.Unlock()
	go l.run(loopCtx, n)
	return nil
}

// run follows the election until ctx ends (Close) or the client closes.
func (l *Latch) run(ctx context.Context, n *lockqueue.Node) {
	defer close(l.done)
	pauses := &lockqueue.Pauses{Client: l.c}
	for ctx.Err() == nil && l.c.Context().Err() == nil {
		t := lockqueue.Track(l.c)
		if n == nil {
			var err error
			if n, err = lockqueue.CreateNode(ctx, l.c, l.q.Path, latchName, l.id); err != nil {
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
			}
			l.pause(ctx, pauses, err)
			continue
		}
		pauses.Reset()
		l.setLeader(true, h.FencingToken(), h.Lost())
		select {
		case <-h.Lost(): // an error state, or the client closed
		case <-ctx.Done():
		}
		h.Forget()
		l.setLeader(false, 0, nil)
		// Look at our node again once a session is back: if it is the same session, we
		// keep our place; if not, Await finds the node gone and we join anew.
		_ = l.c.WaitConnected(ctx)
	}
}

// pause waits between two failed attempts to follow the election, as the client's
// retry policy says, and without end: a latch never gives up until Close.
func (l *Latch) pause(ctx context.Context, pauses *lockqueue.Pauses, err error) {
	if ctx.Err() != nil {
		return
	}
	l.c.Logger().Debug("zkrecipes: latch retrying", "path", l.q.Path, "error", err)
	pauses.Wait(ctx, nil)
}

func (l *Latch) setLeader(leader bool, token int64, term <-chan struct{}) {
	l.notify.Lock()
	defer l.notify.Unlock()
	l.mu.Lock()
	if l.leader == leader {
		l.mu.Unlock()
		return
	}
	l.leader, l.token, l.term = leader, token, term
	close(l.changed)
	l.changed = make(chan struct{})
	silent := l.closed && !l.notifyOnClose
	fns := make([]func(bool), 0, len(l.listeners))
	ids := make([]int, 0, len(l.listeners))
	for id := range l.listeners {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		fns = append(fns, l.listeners[id])
	}
	l.mu.Unlock()
	if silent {
		return
	}
	l.deliverer.Store(goroutineID())
	defer l.deliverer.Store(0)
	for _, fn := range fns {
		fn(leader)
	}
}

// Await blocks until this latch leads, ctx ends, or the latch is closed (ErrClosed).
func (l *Latch) Await(ctx context.Context) error {
	for {
		l.mu.Lock()
		leader, closed, started, ch := l.leader, l.closed, l.started, l.changed
		l.mu.Unlock()
		switch {
		case closed:
			return ErrClosed
		case !started:
			return ErrNotStarted
		case leader:
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("election: awaiting leadership of %s: %w", l.q.Path, ctx.Err())
		}
	}
}

// IsLeader reports whether this latch leads now.
func (l *Latch) IsLeader() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.leader && !l.closed
}

// Listen registers fn to hear every change of this latch's leadership: true when it
// starts leading, false when it stops. Calls come one at a time, in order, from the
// latch's own goroutine; fn must not block for long. stop unregisters fn.
func (l *Latch) Listen(fn func(isLeader bool)) (stop func()) {
	if fn == nil {
		return func() {}
	}
	l.mu.Lock()
	id := l.nextID
	l.nextID++
	l.listeners[id] = fn
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		delete(l.listeners, id)
		l.mu.Unlock()
	}
}

// Leader asks ZooKeeper who leads now: ErrNoLeader when nobody takes part.
func (l *Latch) Leader(ctx context.Context) (Participant, error) {
	ps, err := l.q.Participants(ctx)
	if err != nil {
		return Participant{}, fmt.Errorf("election: leader of %s: %w", l.q.Path, err)
	}
	return leader(ps)
}

// Participants lists the election in queue order, the leader first, with ids.
func (l *Latch) Participants(ctx context.Context) ([]Participant, error) {
	ps, err := l.q.Participants(ctx)
	if err != nil {
		return nil, fmt.Errorf("election: participants of %s: %w", l.q.Path, err)
	}
	return participants(ps), nil
}

// Node is the path of our node in the election while the latch takes part, else "".
func (l *Latch) Node() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.node == nil || l.closed {
		return ""
	}
	return l.node.Path
}

// Context returns a copy of parent that ends when this latch's current term of
// leadership ends: leadership may have been lost (the error policy counted a
// connection state as an error), or Close. Its context.Cause is then ErrNotLeader;
// if the latch does not lead at the call, it has ended already. Run the leader's
// work under it; a Selector does this for you. Call the CancelFunc when the work is
// over.
func (l *Latch) Context(parent context.Context) (context.Context, context.CancelFunc) {
	l.mu.Lock()
	term := l.term
	if !l.leader || l.closed {
		term = lockqueue.Closed
	}
	l.mu.Unlock()
	return lockqueue.HoldContext(parent, fmt.Errorf("%w: %s", ErrNotLeader, l.q.Path), term)
}

// FencingToken grows with every term of leadership of this election, while this
// latch leads; else 0.
func (l *Latch) FencingToken() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.leader || l.closed {
		return 0
	}
	return l.token
}

// Close leaves the election: leadership ends (listeners hear it only with
// NotifyOnClose) and our node is deleted, in the background if the connection is
// down. Called from a listener, Close returns at once and finishes once the listener
// has returned. A second Close returns ErrClosed.
func (l *Latch) Close(ctx context.Context) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	l.closed = true
	started, stop, done := l.started, l.stop, l.done
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
	if !started {
		return nil
	}
	stop()
	// From one of our listeners, the loop that called it cannot end before Close
	// returns; from anywhere else, even while a listener runs, Close waits for it.
	if d := l.deliverer.Load(); d != 0 && d == goroutineID() {
		go func() { _ = l.leave(context.WithoutCancel(ctx), done) }()
		return nil
	}
	return l.leave(ctx, done)
}

// goroutineID is the current goroutine's number, read from its stack trace ("goroutine
// 42 [running]:"), or 0 if that cannot be read: Go has no other way to tell whether
// Close was called from inside a listener, where it must not wait, or from another
// goroutine while a listener runs, where it must.
func goroutineID() uint64 {
	var buf [32]byte
	header := strings.TrimPrefix(string(buf[:runtime.Stack(buf[:], false)]), "goroutine ")
	id, _, _ := strings.Cut(header, " ")
	n, _ := strconv.ParseUint(id, 10, 64)
	return n
}

// leave waits for the election loop to end, then deletes our node.
func (l *Latch) leave(ctx context.Context, done <-chan struct{}) error {
	<-done
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
	return fmt.Errorf("election: leaving %s: %w", l.q.Path, err)
}
