package semaphore

import (
	"context"
	"errors"
	"sync"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/internal/hold"
)

// Mutex is a distributed lock that is not reentrant: Curator's
// InterProcessSemaphoreMutex, a Semaphore with one lease. Acquiring it while it is
// held, even through the same value, waits like any other participant. Any goroutine
// may Release it. Use mutex.Mutex for a reentrant lock.
type Mutex struct {
	s *Semaphore

	mu    sync.Mutex
	lease *Lease
}

// NewMutex makes a participant in the lock at path. Nothing is sent to ZooKeeper
// until Acquire.
func NewMutex(c *framework.Client, path string, opts ...Option) (*Mutex, error) {
	s, err := named(c, path, 1, "semaphore.mutex", opts)
	if err != nil {
		return nil, err
	}
	return &Mutex{s: s}, nil
}

// Acquire waits until this value holds the lock, ctx ends (an error wrapping
// ctx.Err()), or the client closes. If the value already holds the lock, Acquire
// waits for it to be released too. Our node is gone before an error returns.
func (m *Mutex) Acquire(ctx context.Context) error {
	leases, err := m.s.Acquire(ctx, 1)
	if err != nil {
		return err
	}
	m.hold(ctx, leases[0])
	return nil
}

// TryAcquire takes the lock only if it is free now, and reports whether it did; it
// never waits for another holder.
func (m *Mutex) TryAcquire(ctx context.Context) (bool, error) {
	leases, err := m.s.TryAcquire(ctx, 1)
	if errors.Is(err, ErrNoLeases) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	m.hold(ctx, leases[0])
	return true, nil
}

// hold records a new lease. One still recorded must have been lost, since a
// one-lease semaphore granted another: release it, so that it stops following the
// client's states (Curator's CURATOR-376 overwrote it).
func (m *Mutex) hold(ctx context.Context, l *Lease) {
	m.mu.Lock()
	old := m.lease
	m.lease = l
	m.mu.Unlock()
	if old != nil {
		_ = old.Release(ctx)
	}
}

// Release releases the lock: our node is deleted (in the background if the
// connection is down). Any goroutine may call it. It returns ErrNotHeld when the
// lock is not held through this value, and an error wrapping ErrLost when the hold
// had been lost before. Either way the value is then free to Acquire again.
func (m *Mutex) Release(ctx context.Context) error {
	m.mu.Lock()
	l := m.lease
	m.lease = nil
	m.mu.Unlock()
	if l == nil {
		return ErrNotHeld
	}
	return l.Release(ctx)
}

// IsAcquired reports whether this value holds the lock and has not lost it.
func (m *Mutex) IsAcquired() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lease == nil {
		return false
	}
	select {
	case <-m.lease.Lost():
		return false
	default:
		return true
	}
}

// Lost closes when the hold may have been lost: the client's error policy counted
// a connection state as an error (StandardErrorPolicy: Suspended or Lost), the
// client closed, or our lease node was deleted. Stop
// using what the lock protects when it closes. Without a hold it is closed.
func (m *Mutex) Lost() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lease.Lost()
}

// Context returns a copy of parent that ends when the hold may have been lost (Lost
// closes) or is released, with a context.Cause that wraps ErrLost and says why;
// without a hold it has ended already when Context returns, with ErrNotHeld. Call the CancelFunc when the work is over.
func (m *Mutex) Context(parent context.Context) (context.Context, context.CancelFunc) {
	m.mu.Lock()
	l := m.lease
	m.mu.Unlock()
	if l == nil {
		return hold.Context(parent, ErrNotHeld, hold.Closed)
	}
	return l.Context(parent)
}

// Do acquires the lock (see Acquire), runs fn under Context, and releases the lock
// when fn returns, even if it panics (the panic then goes on). It returns Acquire's
// error, or fn's joined with Release's: one wrapping ErrLost means the lock may have
// been lost while fn ran.
func (m *Mutex) Do(ctx context.Context, fn func(ctx context.Context) error) error {
	return hold.Do(ctx, m, fn, ErrInvalid)
}

// FencingToken is a number that grows with every holder of the lock, while it is
// held, else 0: pass it to a store that refuses writes with a token lower than one it
// has seen. See Lease.FencingToken.
func (m *Mutex) FencingToken() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lease.FencingToken()
}

// Node is our node's path while the lock is held, else "".
func (m *Mutex) Node() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lease.Node()
}

// Participants lists the lease nodes in order, the holder first, with each one's
// id.
func (m *Mutex) Participants(ctx context.Context) ([]Participant, error) {
	return m.s.Participants(ctx)
}
