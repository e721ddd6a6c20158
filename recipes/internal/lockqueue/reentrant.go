package lockqueue

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/internal/hold"
)

// ErrNotHeld is returned by Reentrant.Release when nothing is held.
var ErrNotHeld = errors.New("not held")

// AcquireFunc takes a hold, waiting for it or not.
type AcquireFunc func(ctx context.Context, wait bool) (*Held, error)

// Reentrant counts the acquisitions of one participant (a lock value), so that a
// holder may acquire again and is released when it has released as often: the shared
// part of every reentrant recipe.
type Reentrant struct {
	acquire AcquireFunc
	turn    chan struct{} // one acquisition at a time

	mu    sync.Mutex
	held  *Held
	count int
}

// NewReentrant makes a participant that takes its holds with acquire.
func NewReentrant(acquire AcquireFunc) *Reentrant {
	return &Reentrant{acquire: acquire, turn: make(chan struct{}, 1)}
}

// Acquire counts up if already held; else it takes the hold, waiting for it or not.
// It reports whether the participant holds. Acquiring again a hold that was lost
// is an error wrapping ErrLost: release it first. A ctx that has ended already gives
// ctx's error, even while held, and does not count up: the caller did not get another
// acquisition to release.
func (r *Reentrant) Acquire(ctx context.Context, wait bool) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if ok, err := r.reenter(); ok || err != nil {
		return ok, err
	}
	if wait {
		select {
		case r.turn <- struct{}{}:
		case <-ctx.Done():
			return false, ctx.Err()
		}
	} else {
		select {
		case r.turn <- struct{}{}:
		default:
			return false, nil // another goroutine of this participant is acquiring
		}
	}
	defer func() { <-r.turn }()
	if ok, err := r.reenter(); ok || err != nil {
		return ok, err
	}
	h, err := r.acquire(ctx, wait)
	if errors.Is(err, ErrWouldBlock) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	r.mu.Lock()
	r.held, r.count = h, 1
	r.mu.Unlock()
	return true, nil
}

func (r *Reentrant) reenter() (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.held == nil {
		return false, nil
	}
	if hold.Ended(r.held.Lost()) {
		return false, fmt.Errorf("%w: release %s before acquiring it again", ErrLost, r.held.Node)
	}
	r.count++
	return true, nil
}

// Release counts down, and releases the hold when the count reaches zero. A delete
// that goes on in the background counts as released.
func (r *Reentrant) Release(ctx context.Context) error {
	r.mu.Lock()
	if r.held == nil {
		r.mu.Unlock()
		return ErrNotHeld
	}
	r.count--
	if r.count > 0 {
		lost := hold.Ended(r.held.Lost())
		node := r.held.Node
		r.mu.Unlock()
		if lost {
			return fmt.Errorf("%w: %s", ErrLost, node)
		}
		return nil
	}
	h := r.held
	r.held = nil
	r.mu.Unlock()
	if err := h.Release(ctx); err != nil && !errors.Is(err, framework.ErrDeleteInBackground) {
		return err
	}
	return nil
}

// Held is the current hold, or nil.
func (r *Reentrant) Held() *Held {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.held
}

// IsAcquired reports whether the participant holds and has not lost the hold.
func (r *Reentrant) IsAcquired() bool {
	h := r.Held()
	return h != nil && h.Holds()
}

// Lost is the hold's Lost, or a closed channel when nothing is held.
func (r *Reentrant) Lost() <-chan struct{} {
	if h := r.Held(); h != nil {
		return h.Lost()
	}
	return hold.Closed
}

// Context is the current hold's Context: it ends with a cause wrapping lost (and
// why) when the hold may have been lost or is released, and at once, before it
// returns, with cause notHeld when nothing is held.
func (r *Reentrant) Context(parent context.Context, notHeld, lost error) (context.Context, context.CancelFunc) {
	if h := r.Held(); h != nil {
		return h.Context(parent, lost)
	}
	return hold.Context(parent, notHeld, hold.Closed)
}

// FencingToken is the hold's token, or 0.
func (r *Reentrant) FencingToken() int64 {
	if h := r.Held(); h != nil {
		return h.FencingToken()
	}
	return 0
}

// Node is the hold's node path, or "".
func (r *Reentrant) Node() string {
	if h := r.Held(); h != nil {
		return h.Node.Path
	}
	return ""
}

// Rename gives an error of a hold's operation the recipe's own names: notHeld for
// ErrNotHeld, lost (wrapping the cause) for ErrLost, and where ("mutex: release
// /locks/x") in front of any other.
func Rename(err, notHeld, lost error, where string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrNotHeld):
		return notHeld
	case errors.Is(err, ErrLost):
		return fmt.Errorf("%w: %w", lost, err)
	}
	return fmt.Errorf("%s: %w", where, err)
}
