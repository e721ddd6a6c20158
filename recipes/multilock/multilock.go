package multilock

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/internal/hold"
	"github.com/zkrecipes/zkrecipes/recipes/mutex"
)

var (
	// ErrInvalid is wrapped by the errors for bad arguments.
	ErrInvalid = errors.New("multilock: invalid argument")
	// ErrNotHeld is returned by Release when the multi-lock is not held.
	ErrNotHeld = errors.New("multilock: not held")
	// ErrLost is the cause of a Context that ended because one of the locks may
	// have been lost.
	ErrLost = errors.New("multilock: a lock lost")
)

// Lock is what a MultiLock holds: a mutex.Mutex, a semaphore.Mutex, either side of an
// rwlock.RWLock, or any lock of the caller's.
type Lock interface {
	Acquire(ctx context.Context) error
	Release(ctx context.Context) error
}

// MultiLock is several locks taken and released together.
type MultiLock struct {
	locks []Lock

	mu    sync.Mutex
	count int // acquisitions not yet released
}

// New makes a multi-lock over locks, taken in the order given. The same lock given
// twice is refused: one that is not reentrant would wait for itself.
func New(locks ...Lock) (*MultiLock, error) {
	if len(locks) == 0 {
		return nil, fmt.Errorf("%w: no locks", ErrInvalid)
	}
	seen := map[Lock]int{}
	for i, l := range locks {
		v := reflect.ValueOf(l)
		if l == nil || (v.Kind() == reflect.Pointer && v.IsNil()) {
			return nil, fmt.Errorf("%w: lock %d is nil", ErrInvalid, i)
		}
		if v.Kind() != reflect.Pointer { // other kinds may not be comparable
			continue
		}
		if j, ok := seen[l]; ok {
			return nil, fmt.Errorf("%w: lock %d is lock %d again", ErrInvalid, i, j)
		}
		seen[l] = i
	}
	return &MultiLock{locks: slices.Clone(locks)}, nil
}

// NewMutexes makes a multi-lock over a mutex.Mutex for each path, taken in sorted
// order whatever order paths are given in.
func NewMutexes(c *framework.Client, paths []string, opts ...mutex.Option) (*MultiLock, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("%w: no paths", ErrInvalid)
	}
	sorted := slices.Clone(paths)
	slices.Sort(sorted)
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			// Two mutexes of one multi-lock on one path would wait for each other.
			return nil, fmt.Errorf("%w: path %q given twice", ErrInvalid, sorted[i])
		}
	}
	locks := make([]Lock, len(sorted))
	for i, p := range sorted {
		m, err := mutex.New(c, p, opts...)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
		locks[i] = m
	}
	return &MultiLock{locks: locks}, nil
}

// Acquire takes every lock in order, or none: if one fails, or ctx ends, those taken
// are released (with a context of their own) and the error returned. Acquiring
// again while held takes every lock again, which reentrant locks count. A ctx that
// has ended already gives its error and takes nothing, even while held: it does not
// count up.
func (m *MultiLock) Acquire(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("multilock: %w", err)
	}
	for i, l := range m.locks {
		if err := l.Acquire(ctx); err != nil {
			releaseErr := releaseAll(context.WithoutCancel(ctx), m.locks[:i])
			return errors.Join(fmt.Errorf("multilock: lock %d of %d: %w", i+1, len(m.locks), err), releaseErr)
		}
	}
	m.mu.Lock()
	m.count++
	m.mu.Unlock()
	return nil
}

// Release releases every lock at once, in one round trip (their deletes go in one
// flight), going on past failures, and returns the failures joined, in the locks'
// order.
func (m *MultiLock) Release(ctx context.Context) error {
	m.mu.Lock()
	if m.count == 0 {
		m.mu.Unlock()
		return ErrNotHeld
	}
	m.count--
	m.mu.Unlock()
	return releaseAll(ctx, m.locks)
}

// IsAcquired reports whether the multi-lock holds every lock: for locks that can say
// (an IsAcquired method), each must; the others count as held between Acquire and
// Release.
func (m *MultiLock) IsAcquired() bool {
	m.mu.Lock()
	held := m.count > 0
	m.mu.Unlock()
	if !held {
		return false
	}
	for _, l := range m.locks {
		if a, ok := l.(interface{ IsAcquired() bool }); ok && !a.IsAcquired() {
			return false
		}
	}
	return true
}

// Context returns a copy of parent that ends when any of the locks that can say so
// (a Lost method, as every lock of this module has) may have been lost or is
// released, with a context.Cause that wraps ErrLost and, where that lock's own
// Context says why, the reason (a node deleted, a session expired). Without a hold it has ended
// already, with ErrNotHeld. Call the CancelFunc when the work is over.
func (m *MultiLock) Context(parent context.Context) (context.Context, context.CancelFunc) {
	m.mu.Lock()
	held := m.count > 0
	m.mu.Unlock()
	if !held {
		return hold.Context(parent, ErrNotHeld, hold.Closed)
	}
	var lost []<-chan struct{}
	for _, l := range m.locks {
		if l, ok := l.(interface{ Lost() <-chan struct{} }); ok {
			lost = append(lost, l.Lost())
		}
	}
	return hold.ContextFunc(parent, m.lostCause, lost...)
}

// lostCause wraps ErrLost with the first lock that says it was lost, and why, as its
// own Context says (ended already, since its Lost has closed).
func (m *MultiLock) lostCause() error {
	for i, l := range m.locks {
		l, ok := l.(interface {
			Lost() <-chan struct{}
			Context(context.Context) (context.Context, context.CancelFunc)
		})
		if !ok || !hold.Ended(l.Lost()) {
			continue
		}
		ctx, cancel := l.Context(context.Background())
		cause := context.Cause(ctx)
		cancel()
		if cause != nil {
			return fmt.Errorf("%w: lock %d: %w", ErrLost, i+1, cause)
		}
	}
	return ErrLost
}

// Do acquires every lock (see Acquire), runs fn under Context, and releases them
// when fn returns, even if it panics (the panic then goes on). It returns Acquire's
// error, or fn's joined with Release's: one that wraps a lock's ErrLost means that
// lock may have been lost while fn ran.
func (m *MultiLock) Do(ctx context.Context, fn func(ctx context.Context) error) error {
	return hold.Do(ctx, m, fn, ErrInvalid)
}

func releaseAll(ctx context.Context, locks []Lock) error {
	errs := make([]error, len(locks))
	var wg sync.WaitGroup
	for i, l := range locks {
		wg.Go(func() {
			if err := l.Release(ctx); err != nil {
				errs[i] = fmt.Errorf("multilock: release lock %d: %w", i+1, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
