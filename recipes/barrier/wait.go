package barrier

import (
	"context"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/internal/attempt"
)

// waiter is what a barrier waits on: its one watch, the client's state changes (a
// session lost, a connection back), and the caller's context.
type waiter struct {
	wake   chan struct{}
	stop   func()
	pauses attempt.Pauses
}

func newWaiter(c *framework.Client) *waiter {
	w := &waiter{wake: make(chan struct{}, 1), pauses: attempt.Pauses{Client: c}}
	w.stop = c.Listen(func(framework.ConnectionState) {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	})
	return w
}

// await blocks until watch fires (nil: never), a connection state changes, or ctx
// ends (its error).
func (w *waiter) await(ctx context.Context, watch <-chan framework.Event) error {
	w.pauses.Reset()
	select {
	case <-watch:
	case <-w.wake:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// failed decides about an error: a connection error is waited out (until a state
// changes, or a pause as the client's retry policy says, without end) and gives nil;
// any other is returned. Once the client has had a session (attempt.FirstSession),
// that is an outage, which ctx bounds.
func (w *waiter) failed(ctx context.Context, err error) error {
	if !framework.IsRetryable(err) || ctx.Err() != nil {
		return err
	}
	w.pauses.Wait(ctx, w.wake)
	return ctx.Err()
}
