package hold

import (
	"context"
	"errors"
	"fmt"
)

// Closed is a closed channel: the Lost of a participant that holds nothing.
var Closed <-chan struct{} = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Context returns a copy of parent that ends, with cause (context.Cause), as
// soon as any of lost closes: the one-call way for a holder to stop its work when
// the hold may be gone. The CancelFunc ends it too, with context.Canceled, and stops
// watching lost; call it when the work is over.
func Context(parent context.Context, cause error, lost ...<-chan struct{}) (context.Context, context.CancelFunc) {
	return ContextFunc(parent, func() error { return cause }, lost...)
}

// ContextFunc is Context with a cause known only once a channel has closed (why a
// hold was lost). If any of lost has closed already, the context returned has ended
// already: a caller that checks its Err at once never sees a hold it does not have.
func ContextFunc(parent context.Context, cause func() error, lost ...<-chan struct{}) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	for _, ch := range lost {
		select {
		case <-ch:
			cancel(cause())
			return ctx, func() { cancel(context.Canceled) }
		default:
		}
	}
	for _, ch := range lost {
		go func() {
			select {
			case <-ch:
				cancel(cause())
			case <-ctx.Done():
			}
		}()
	}
	return ctx, func() { cancel(context.Canceled) }
}

// Ended reports, without waiting, whether ch has closed: whether a hold's Lost says
// it is over.
func Ended(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Lock is what Do needs of a lock-like recipe.
type Lock interface {
	Acquire(ctx context.Context) error
	Release(ctx context.Context) error
	Context(parent context.Context) (context.Context, context.CancelFunc)
}

// Do acquires l, runs fn under l's Context, and releases l once fn has returned,
// panicked or called runtime.Goexit: a panic goes on after the release. The release
// gets a context that ctx's end does not cancel, since ctx may be what ended fn.
// Do returns the error of the acquisition, or fn's joined with the release's: a
// release that says the hold was lost tells the caller that fn may not have run
// alone to its end. A nil fn is refused, wrapping invalid, before anything is sent.
func Do(ctx context.Context, l Lock, fn func(ctx context.Context) error, invalid error) (err error) {
	if fn == nil {
		return fmt.Errorf("%w: nil function", invalid)
	}
	if err := l.Acquire(ctx); err != nil {
		return err
	}
	defer func() { err = errors.Join(err, l.Release(context.WithoutCancel(ctx))) }()
	held, cancel := l.Context(ctx)
	defer cancel()
	return fn(held)
}
