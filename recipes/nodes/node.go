package nodes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/notify"
	"github.com/zkrecipes/zkrecipes/recipes/internal/attempt"
	"github.com/zkrecipes/zkrecipes/recipes/internal/instrument"
	"github.com/zkrecipes/zkrecipes/recipes/internal/lifecycle"
)

// PersistentNode is a node this client keeps in place: made again after its
// session ends or someone deletes it, and given the latest data, until Close.
type PersistentNode struct {
	c    *framework.Client
	base string // the path asked for
	o    options

	state lifecycle.Lifecycle // moved under mu, with the fields Start and Close set

	mu      sync.Mutex
	data    []byte
	dataGen uint64        // counts the data given: New's is 1, each SetData adds one
	node                  // what we know of our node
	changed chan struct{} // closed and replaced when the node or its data changes
	wake    chan struct{} // makes the keeper look again
	stop    context.CancelFunc
	done    chan struct{}            // closed when the keeper has stopped
	events  *notify.Listeners[Event] // delivered so that the keeper never waits for a listener
	mute    chan struct{}            // closed to stop delivering events
	changes *instrument.Counter      // the events, counted; nil when not measured
}

// node is what a PersistentNode knows of the node it made. Fields are guarded by
// the PersistentNode's mu.
type node struct {
	path     string         // the actual path, "" before the first create
	inPlace  bool           // the keeper last saw our node there
	written  uint64         // the dataGen our node holds, 0 if unknown
	sessions map[int64]bool // every session our ephemeral node was made in
	czxid    int64          // persistent: the zxid that made our node, 0 while unknown
	since    int64          // persistent: no node of ours is older than this zxid
	made     bool           // persistent: our last create succeeded (its czxid unknown yet)
}

// New makes a PersistentNode for path holding data (nil is empty data). Nothing is
// sent to ZooKeeper until Start.
func New(c *framework.Client, path string, data []byte, opts ...Option) (*PersistentNode, error) {
	o, err := newOptions(c, path, opts)
	if err != nil {
		return nil, err
	}
	return &PersistentNode{
		c:       c,
		base:    path,
		o:       o,
		data:    bytes.Clone(data),
		dataGen: 1,
		node:    node{sessions: map[int64]bool{}},
		changed: make(chan struct{}),
		wake:    make(chan struct{}, 1),
		events:  notify.New[Event](),
		changes: newPresenceChanges(c),
	}, nil
}

// Start makes the node and returns once it exists for the first time; from then on
// the PersistentNode keeps it in place in the background until Close. When ctx ends
// first, or the node cannot be made (the path holds a node that is not ours:
// ErrNodeExists; an ACL refuses it; the server does not allow TTL nodes), Start
// returns the error, leaves no node behind, and may be called again.
//
// Started before its client's first session, Start waits for one as the client's
// operations do (framework.Client.WaitConnected): one connection timeout at most,
// unless the client was made WithRetryBeforeFirstConnection. When none comes in
// time, Start returns an error wrapping the client's *framework.ConnectError (which
// wraps framework.ErrNoServer and says why the last attempt to reach a server
// failed), having sent nothing and left nothing running, and may be called again.
// Once the client has had a session, Start waits through an outage for as long as
// ctx allows.
func (p *PersistentNode) Start(ctx context.Context) error {
	p.mu.Lock()
	if err := ctx.Err(); err != nil && p.state.State() == lifecycle.Latent {
		p.mu.Unlock()
		return fmt.Errorf("nodes: starting %s: %w", p.base, err)
	}
	if err := p.state.Start(ErrStarted, ErrClosed); err != nil {
		p.mu.Unlock()
		return err
	}
	keepCtx, stop := lifecycle.Context(p.c)
	done, first, mute := make(chan struct{}), make(chan error, 1), make(chan struct{})
	p.stop, p.done, p.mute = stop, done, mute
	p.mu.Unlock()

	go p.events.Run(mute)
	go p.keep(keepCtx, first, done)
	var err error
	select {
	case err = <-first:
		if err == nil {
			return nil
		}
	case <-ctx.Done():
		err = ctx.Err()
	case <-done: // Close stopped it, or the keeper failed just now
		select {
		case err = <-first:
		default:
		}
	}
	stop()
	<-done
	p.mu.Lock()
	closed := p.state.State() == lifecycle.Closed
	if !closed {
		close(mute)
		p.mute = nil
	}
	p.mu.Unlock()
	if closed {
		return ErrClosed
	}
	// A node made as ctx ended: delete it with a context of its own, since ctx may be
	// the one that ended.
	cleanup, cancel := attempt.CleanupContext(ctx)
	_ = p.remove(cleanup)
	cancel()
	p.mu.Lock()
	p.state.Unstart()
	p.stop, p.done = nil, nil
	p.mu.Unlock()
	if err == nil {
		err = ErrClosed
	}
	return fmt.Errorf("nodes: starting %s: %w", p.base, err)
}

// SetData gives the node new data: every later re-create uses it. Before Start it
// only replaces the data New was given. After Start it returns once the node holds
// the data, or when ctx ends (an error wrapping ctx's; the data is kept, and written
// once the node can be reached). A ReadOnly node's data cannot change: SetData then
// returns an error wrapping ErrReadOnly at once.
func (p *PersistentNode) SetData(ctx context.Context, data []byte) error {
	if p.o.readOnly {
		return fmt.Errorf("%w: %s: its data cannot change", ErrReadOnly, p.base)
	}
	p.mu.Lock()
	if p.state.State() == lifecycle.Closed {
		p.mu.Unlock()
		return ErrClosed
	}
	p.data = bytes.Clone(data)
	p.dataGen++
	gen, started := p.dataGen, p.state.State() == lifecycle.Started
	p.mu.Unlock()
	if !started {
		return nil
	}
	p.poke()
	for {
		p.mu.Lock()
		closed, done, ch := p.state.State() == lifecycle.Closed, p.inPlace && p.written >= gen, p.changed
		p.mu.Unlock()
		switch {
		case closed:
			return ErrClosed
		case done:
			return nil
		}
		select {
		case <-ch:
		case <-p.c.ForRecipes().Context().Done():
			return lifecycle.ClientClosed(p.c, "nodes: writing the data of "+p.base)
		case <-ctx.Done():
			return fmt.Errorf("nodes: writing the data of %s (kept for when it can be written): %w", p.base, ctx.Err())
		}
	}
}

// Path is the node's actual path (with its protection prefix and sequence number, if
// any): "" before the first create and after Close.
func (p *PersistentNode) Path() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.path
}

// Listen registers fn to hear every Event after this call, in order, on a goroutine
// of the PersistentNode's: the node made at Start, found gone, made again. fn must
// not block for long (later events wait for it), and may call Close; once Close has
// begun, no event is delivered but one already under way. stop unregisters fn.
func (p *PersistentNode) Listen(fn func(Event)) (stop func()) { return p.events.Listen(fn) }

// Close stops keeping the node and deletes it, unless it is no longer ours (its
// session ended, or another client's node took the path). When the delete cannot be
// done now (no connection, or ctx ends), it goes on in the background while the
// node's session may still be alive, and Close returns an error wrapping
// framework.ErrDeleteInBackground. A second Close returns nil.
func (p *PersistentNode) Close(ctx context.Context) error {
	p.mu.Lock()
	if p.state.Close() == lifecycle.Closed {
		p.mu.Unlock()
		return nil
	}
	stop, done, mute := p.stop, p.done, p.mute
	p.mute = nil
	p.changedLocked()
	p.mu.Unlock()
	if mute != nil {
		close(mute) // without waiting for a delivery: Close may be called by a listener
	}
	if stop == nil {
		return nil
	}
	stop()
	<-done
	return p.remove(ctx)
}

func (p *PersistentNode) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// changedLocked wakes those waiting for a change. p.mu is held.
func (p *PersistentNode) changedLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// keep puts the node in place, keeps it there and brings its data up to date, until
// ctx ends or the client closes. The first time the node is in place, or the first
// definitive failure before that, goes to first; a client closed after that, to the
// listeners.
func (p *PersistentNode) keep(ctx context.Context, first chan<- error, done chan<- struct{}) {
	defer close(done)
	stopState := p.c.Listen(func(framework.ConnectionState) { p.poke() })
	defer stopState()
	if err := attempt.FirstSession(ctx, p.c); err != nil {
		p.fail(first, err)
		return
	}
	pauses := &attempt.Pauses{Client: p.c}
	for ctx.Err() == nil {
		watch, err := p.check(ctx)
		switch {
		case errors.Is(err, framework.ErrClosed):
			p.stopped(first, err)
			return
		case err != nil && ctx.Err() == nil:
			if first != nil && !framework.IsRetryable(err) {
				p.fail(first, err)
				return
			}
			p.c.ForRecipes().Logger().Warn("zkrecipes: cannot put a persistent node in place; will retry", "path", p.base, "error", err)
			// A reconnect (a state change pokes wake) is the moment to try again.
			pauses.Wait(ctx, p.wake)
			continue
		case err != nil:
			continue // ctx ended: by Close, or by the client's close
		}
		pauses.Reset()
		if watch == nil { // look again at once
			continue
		}
		if first != nil {
			first <- nil
			first = nil
		}
		select {
		case <-watch:
		case <-p.wake:
		case <-ctx.Done():
		}
	}
	if cause := context.Cause(ctx); errors.Is(cause, framework.ErrClosed) {
		p.stopped(first, cause)
	}
}

func (p *PersistentNode) fail(first chan<- error, err error) {
	if first != nil {
		first <- err
	}
}

// stopped ends the keeping for a closed client: a Start waiting for the node hears
// err, else the listeners do, once, last.
func (p *PersistentNode) stopped(first chan<- error, err error) {
	if first != nil {
		first <- err
		return
	}
	p.mu.Lock()
	p.inPlace = false
	p.events.Push(Event{Path: p.path, Err: fmt.Errorf("nodes: stopped keeping %s: %w", p.base, err)})
	p.changedLocked()
	p.mu.Unlock()
}

// check looks at our node. In place and ours: it brings the data up to date and
// returns a watch for the node's next change. Otherwise it makes the node, and
// returns no watch, so that the keeper looks again at once.
func (p *PersistentNode) check(ctx context.Context) (<-chan framework.Event, error) {
	p.mu.Lock()
	path := p.path
	p.mu.Unlock()
	if path != "" {
		ok, stat, watch, err := p.c.ExistsW(ctx, path)
		if err != nil {
			return nil, err
		}
		if ok && p.ours(stat, false) {
			if settled, err := p.update(ctx, path, stat); !settled {
				return nil, err
			}
			return watch, nil
		}
		p.setInPlace(false, 0)
	}
	return nil, p.place(ctx)
}

// update writes the latest data to our node if it does not hold it yet. settled
// says the node held the latest data when update returned.
func (p *PersistentNode) update(ctx context.Context, path string, stat *framework.Stat) (settled bool, err error) {
	p.mu.Lock()
	data, gen, written := p.data, p.dataGen, p.written
	p.mu.Unlock()
	if written == gen {
		p.setInPlace(true, gen)
		return true, nil
	}
	// Conditional on the version just seen, so that a node that replaced ours
	// meanwhile is never written.
	_, err = p.c.Set(ctx, path, data, stat.Version)
	switch {
	case err == nil:
		p.setInPlace(true, gen)
		return true, nil
	case errors.Is(err, framework.ErrBadVersion), errors.Is(err, framework.ErrNoNode):
		return false, nil // changed or gone meanwhile: look again
	}
	return false, err
}

func (p *PersistentNode) setInPlace(inPlace bool, written uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inPlace != inPlace || (inPlace && p.written != written) {
		if p.inPlace != inPlace {
			p.changes.Add(1, presence(inPlace))
			p.events.Push(Event{Path: p.path, Present: inPlace})
		}
		p.inPlace = inPlace
		if inPlace {
			p.written = written
		}
		p.changedLocked()
	}
}
