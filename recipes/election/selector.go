package election

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/mutex"
)

// Selector runs a function while it leads an election.
type Selector struct {
	c           *framework.Client
	path        string
	lead        func(ctx context.Context) error
	m           *mutex.Mutex
	autoRequeue bool

	mu        sync.Mutex
	started   bool
	closed    bool
	queued    bool               // a term is queued or running
	granted   bool               // the queued term has won the election: lead runs or ran
	again     bool               // Requeue was called after the term had won
	leading   bool               // lead is running
	interrupt context.CancelFunc // ends the current term's ctx
	ctx       context.Context    // ends on Close
	stop      context.CancelFunc
	terms     sync.WaitGroup
}

// NewSelector makes a participant in the election at path that runs lead while it
// leads. lead must return when its ctx ends; leadership is given up when it returns.
func NewSelector(c *framework.Client, path string, lead func(ctx context.Context) error, opts ...Option) (*Selector, error) {
	o, err := newOptions(c, path, opts)
	if err != nil {
		return nil, err
	}
	if lead == nil {
		return nil, fmt.Errorf("%w: nil lead function", ErrInvalid)
	}
	m, err := mutex.New(c, path, mutex.WithID(o.id))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	ctx, stop := context.WithCancel(context.Background())
	return &Selector{c: c, path: path, lead: lead, m: m, autoRequeue: o.autoRequeue, ctx: ctx, stop: stop}, nil
}

// Start enters the election; the selector then waits for leadership in the
// background. ctx is not kept: Close ends the selector.
func (s *Selector) Start(ctx context.Context) error {
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return ErrClosed
	case s.started:
		s.mu.Unlock()
		return ErrStarted
	}
	s.started = true
	s.mu.Unlock()
	return s.Requeue()
}

// Requeue enters the election once more: at once if no term is queued or running,
// else after the current term.
func (s *Selector) Requeue() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return ErrClosed
	case !s.started:
		return ErrNotStarted
	case s.queued:
		// A term that still waits for leadership already is the requeue; one that has
		// won is followed by another.
		s.again = s.again || s.granted
		return nil
	}
	s.queued = true
	s.terms.Add(1)
	go s.run()
	return nil
}

// run waits for leadership and runs terms: one, or with AutoRequeue as many as it
// gets until Close.
func (s *Selector) run() {
	defer s.terms.Done()
	for {
		s.term()
		s.mu.Lock()
		again := (s.autoRequeue || s.again) && !s.closed && s.c.Context().Err() == nil
		s.again, s.granted = false, false
		if !again {
			s.queued = false
		}
		s.mu.Unlock()
		if !again {
			return
		}
	}
}

// term waits for the lock and runs lead once while holding it.
func (s *Selector) term() {
	if err := s.m.Acquire(s.ctx); err != nil {
		if s.ctx.Err() == nil {
			s.c.Logger().Warn("zkrecipes: selector could not join the election", "path", s.path, "error", err)
			pause(s.ctx, time.Second)
		}
		return
	}
	leadCtx, cancel := context.WithCancel(s.ctx)
	s.mu.Lock()
	s.leading, s.granted, s.interrupt = true, true, cancel
	s.mu.Unlock()
	go func() {
		select {
		case <-s.m.Lost():
			cancel()
		case <-leadCtx.Done():
		}
	}()
	if err := s.lead(leadCtx); err != nil && !errors.Is(err, context.Canceled) {
		s.c.Logger().Warn("zkrecipes: lead returned an error", "path", s.path, "error", err)
	}
	cancel()
	s.mu.Lock()
	s.leading, s.interrupt = false, nil
	s.mu.Unlock()
	if err := s.m.Release(context.WithoutCancel(s.ctx)); err != nil && !errors.Is(err, mutex.ErrLost) {
		s.c.Logger().Warn("zkrecipes: selector releasing leadership", "path", s.path, "error", err)
	}
}

func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// InterruptLeadership ends the current term: lead's ctx is cancelled. Nothing happens
// if the selector does not lead.
func (s *Selector) InterruptLeadership() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.interrupt != nil {
		s.interrupt()
	}
}

// IsLeader reports whether lead is running.
func (s *Selector) IsLeader() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.leading
}

// Leader asks ZooKeeper who leads now: ErrNoLeader when nobody takes part.
func (s *Selector) Leader(ctx context.Context) (Participant, error) {
	ps, err := s.m.Participants(ctx)
	if err != nil {
		return Participant{}, fmt.Errorf("election: leader of %s: %w", s.path, err)
	}
	return leader(ps)
}

// Participants lists the election in queue order, the leader first, with ids.
func (s *Selector) Participants(ctx context.Context) ([]Participant, error) {
	ps, err := s.m.Participants(ctx)
	if err != nil {
		return nil, fmt.Errorf("election: participants of %s: %w", s.path, err)
	}
	return participants(ps), nil
}

// Close leaves the election: a waiting term stops, a running lead's ctx is
// cancelled, and Close waits for lead to return and our node to go, or for ctx to
// end. A second Close returns ErrClosed.
func (s *Selector) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.closed = true
	s.mu.Unlock()
	s.stop()
	done := make(chan struct{})
	go func() { s.terms.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("election: closing %s: lead has not returned: %w", s.path, ctx.Err())
	}
}
