package election

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/internal/lifecycle"
	"github.com/zkrecipes/zkrecipes/recipes/internal/lockqueue"
)

// selectorName is the mutex's node name: Curator's LeaderSelector queues on an
// InterProcessMutex, so Go and Java selectors share an election.
const selectorName = "lock-"

// Selector runs a function while it leads an election.
type Selector struct {
	c           *framework.Client
	path        string
	q           *lockqueue.Queue
	id          string
	lead        func(ctx context.Context, term Term) error
	autoRequeue bool

	state lifecycle.Lifecycle // moved under mu

	mu        sync.Mutex
	queued    bool                    // a term is queued or running
	granted   bool                    // the queued term has won the election: lead runs or ran
	again     bool                    // Requeue was called after the term had won
	leading   bool                    // lead is running
	held      *lockqueue.Held         // the running term's hold
	token     int64                   // the fencing token of the running term
	interrupt context.CancelCauseFunc // ends the current term's ctx
	ctx       context.Context         // ends on Close
	stop      context.CancelCauseFunc
	terms     sync.WaitGroup
}

// Term is one term of leadership, as a Selector hands it to its lead function.
type Term struct {
	// ID is this participant's id (WithID): the data of its node.
	ID string
	// FencingToken grows with every term of leadership of the election (it equals
	// the Selector's FencingToken while lead runs): hand it to what lead writes, so
	// that a store can refuse a deposed leader's late writes.
	FencingToken int64
}

// NewSelector makes a participant in the election at path that runs lead while it
// leads, with the term's participant id and fencing token. lead must return when its
// ctx ends; leadership is given up when it returns. Its ctx ends, and
// context.Cause(ctx) says why, when leadership may have been lost
// (ErrLeadershipLost), on InterruptLeadership (ErrInterrupted) and on Close
// (ErrClosed): the leadership counterpart of the locks' Do.
func NewSelector(c *framework.Client, path string, lead func(ctx context.Context, term Term) error, opts ...Option) (*Selector, error) {
	o, err := newOptions(c, path, opts)
	if err != nil {
		return nil, err
	}
	if lead == nil {
		return nil, fmt.Errorf("%w: nil lead function", ErrInvalid)
	}
	ctx, stop := context.WithCancelCause(context.Background())
	return &Selector{
		c:           c,
		path:        path,
		q:           lockqueue.New(c, path, selectorName, lockqueue.Exclusive, lockqueue.HandOverOnNotification(), lockqueue.Observed(lockqueue.ObserveElection(c, "selector"))),
		id:          o.id,
		lead:        lead,
		autoRequeue: o.autoRequeue,
		ctx:         ctx,
		stop:        stop,
	}, nil
}

// Start enters the election: it returns once our node is in the queue (waiting for
// a connection if need be), and the selector then waits for leadership in the
// background until Close. If the node cannot be made (an ACL refuses it: the error
// wraps framework.ErrNoAuth) or ctx ends first, Start returns the error, leaves no
// node, and may be tried again.
func (s *Selector) Start(ctx context.Context) error {
	s.mu.Lock()
	if err := s.state.Start(ErrStarted, ErrClosed); err != nil {
		s.mu.Unlock()
		return err
	}
	s.queued = true
	s.terms.Add(1)
	s.mu.Unlock()
	joined := make(chan error, 1)
	go s.run(ctx, joined)
	err := <-joined
	if err == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.state.State() == lifecycle.Closed:
		return ErrClosed
	case ctx.Err() != nil && !errors.Is(err, ctx.Err()): // the wait was cut short for ctx
		return fmt.Errorf("election: joining %s: %w: %w", s.path, ctx.Err(), err)
	}
	return fmt.Errorf("election: joining %s: %w", s.path, err)
}

// Requeue enters the election once more: at once if no term is queued or running,
// else after the current term.
func (s *Selector) Requeue() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.state.State() == lifecycle.Closed:
		return ErrClosed
	case s.state.State() == lifecycle.Latent:
		return ErrNotStarted
	case s.queued:
		// A term that still waits for leadership already is the requeue; one that has
		// won is followed by another.
		s.again = s.again || s.granted
		return nil
	}
	s.queued = true
	s.terms.Add(1)
	go s.run(context.Background(), nil)
	return nil
}

// run waits for leadership and runs terms: one, or with AutoRequeue as many as it
// gets until Close. joined is Start's: see term.
func (s *Selector) run(start context.Context, joined chan<- error) {
	defer s.terms.Done()
	for {
		err := s.term(start, joined)
		s.mu.Lock()
		again := err == nil && (s.autoRequeue || s.again) && s.state.State() != lifecycle.Closed && s.c.ForRecipes().Context().Err() == nil
		s.again, s.granted = false, false
		if !again {
			s.queued = false
		}
		if err != nil {
			s.state.Unstart() // not in the election: Start may be tried again
		}
		s.mu.Unlock()
		if err != nil {
			joined <- err
			return
		}
		if !again {
			return
		}
		joined = nil
	}
}

// term queues for leadership and runs lead once while it leads. For Start's term,
// joined hears nil once our node is in the queue; until then start bounds the wait
// too, and a failure is returned for Start to report instead of logged.
func (s *Selector) term(start context.Context, joined chan<- error) error {
	ctx, opts := s.ctx, lockqueue.Options{Wait: true}
	if joined != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(s.ctx)
		defer cancel()
		stop := context.AfterFunc(start, cancel)
		opts.Queued = func() {
			if stop() { // else start has ended, and Acquire fails with it
				joined <- nil
				joined = nil
			}
		}
	}
	h, err := s.q.Acquire(ctx, []byte(s.id), opts)
	if err != nil {
		if joined != nil {
			return err
		}
		if s.ctx.Err() == nil {
			s.c.ForRecipes().Logger().Warn("zkrecipes: selector could not join the election", "path", s.path, "error", err)
			pause(s.ctx, time.Second)
		}
		return nil
	}
	// Three layers, so that context.Cause tells the endings apart: Close ends s.ctx,
	// InterruptLeadership the term, and a loss the hold's context.
	termCtx, interrupt := context.WithCancelCause(s.ctx)
	leadCtx, cancel := h.Context(termCtx, fmt.Errorf("%w: %s", ErrLeadershipLost, s.path))
	term := Term{ID: s.id, FencingToken: h.FencingToken()}
	s.mu.Lock()
	s.leading, s.granted, s.interrupt, s.token, s.held = true, true, interrupt, term.FencingToken, h
	s.mu.Unlock()
	if err := s.lead(leadCtx, term); err != nil && !errors.Is(err, context.Canceled) {
		s.c.ForRecipes().Logger().Warn("zkrecipes: lead returned an error", "path", s.path, "error", err)
	}
	cancel()
	interrupt(nil)
	s.mu.Lock()
	s.leading, s.interrupt, s.token, s.held = false, nil, 0, nil
	s.mu.Unlock()
	err = h.Release(context.WithoutCancel(s.ctx))
	if err != nil && !errors.Is(err, lockqueue.ErrLost) && !errors.Is(err, framework.ErrDeleteInBackground) {
		s.c.ForRecipes().Logger().Warn("zkrecipes: selector releasing leadership", "path", s.path, "error", err)
	}
	return nil
}

func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// InterruptLeadership ends the current term: lead's ctx is cancelled, with
// ErrInterrupted as its cause. Nothing happens if the selector does not lead.
func (s *Selector) InterruptLeadership() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.interrupt != nil {
		s.interrupt(fmt.Errorf("%w: %s", ErrInterrupted, s.path))
	}
}

// IsLeader reports whether lead is running in a term that has not been lost: from
// the moment leadership may be lost (lead's ctx ends), it is false, even while lead
// is still returning.
func (s *Selector) IsLeader() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.leadingNow()
}

// leadingNow is IsLeader with s.mu held.
func (s *Selector) leadingNow() bool {
	if !s.leading {
		return false
	}
	return s.held.Holds()
}

// FencingToken grows with every term of leadership of this election: while it leads
// (IsLeader), its term's token, for lead to hand to what it writes; else 0.
func (s *Selector) FencingToken() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.leadingNow() {
		return 0
	}
	return s.token
}

// Leader asks ZooKeeper who leads now: ErrNoLeader when nobody takes part.
func (s *Selector) Leader(ctx context.Context) (Participant, error) {
	ps, err := s.q.Participants(ctx)
	if err != nil {
		return Participant{}, fmt.Errorf("election: leader of %s: %w", s.path, err)
	}
	return leader(ps)
}

// Participants lists the election in queue order, the leader first, with ids.
func (s *Selector) Participants(ctx context.Context) ([]Participant, error) {
	ps, err := s.q.Participants(ctx)
	if err != nil {
		return nil, fmt.Errorf("election: participants of %s: %w", s.path, err)
	}
	return participants(ps), nil
}

// Close leaves the election: a waiting term stops, a running lead's ctx is
// cancelled with ErrClosed as its cause, and Close waits for lead to return and our
// node to go, or for ctx to end. A second Close returns nil.
func (s *Selector) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.state.Close() == lifecycle.Closed {
		s.mu.Unlock()
		return nil
	}
	s.mu.Unlock()
	s.stop(fmt.Errorf("%w: %s", ErrClosed, s.path))
	done := make(chan struct{})
	go func() { s.terms.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("election: closing %s: lead has not returned: %w", s.path, ctx.Err())
	}
}
