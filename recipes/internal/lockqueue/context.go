package lockqueue

import (
	"context"
	"errors"
	"fmt"
)

// HoldContext returns a copy of parent that ends, with cause (context.Cause), as
// soon as any of lost closes: the one-call way for a holder to stop its work when
// the hold may be gone. The CancelFunc ends it too, with context.Canceled, and stops
// watching lost; call it when the work is over.
func HoldContext(parent context.Context, cause error, lost ...<-chan struct{}) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	for _, ch := range lost {
		go func() {
			select {
			case <-ch:
				cancel(cause)
			case <-ctx.Done():
			}
		}()
	}
	return ctx, func() { cancel(context.Canceled) }
}

// Hold is what Do needs of a lock-like recipe.
type Hold interface {
	Acquire(ctx context.Context) error
	Release(ctx context.Context) error
	Context(parent context.Context) (context.Context, context.CancelFunc)
}

// Do acquires h, runs fn under h's Context, and releases h once fn has returned,
// panicked or called runtime.Goexit: a panic goes on after the release. The release
// gets a context that ctx's end does not cancel, since ctx may be what ended fn.
// Do returns the error of the acquisition, or fn's joined with the release's: a
// release that says the hold was lost tells the caller that fn may not have run
// alone to its end. A nil fn is refused, wrapping invalid, before anything is sent.
func Do(ctx context.Context, h Hold, fn func(ctx context.Context) error, invalid error) (err error) {
	if fn == nil {
		return fmt.Errorf("%w: nil function", invalid)
	}
	if err := h.Acquire(ctx); err != nil {
		return err
	}
	defer func() { err = errors.Join(err, h.Release(context.WithoutCancel(ctx))) }()
	held, cancel := h.Context(ctx)
	defer cancel()
	return fn(held)
}
