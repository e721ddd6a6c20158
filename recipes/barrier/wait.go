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

// firstSession waits for c's first session, if it has never had one, as long as the
// client's operations would (framework.Client.WaitConnected): one connection
// timeout at most, unless the client was made WithRetryBeforeFirstConnection. Its
// error is WaitConnected's: the wait running out (a *framework.ConnectError wrapping
// framework.ErrNoServer), ctx's end or the client's close. A barrier calls it before
// its first request: failed waits out a connection error as an outage, which before
// a first session would never end.
func firstSession(ctx context.Context, c *framework.Client) error {
	if c.State() != framework.Latent {
		return nil
	}
	return c.WaitConnected(ctx)
}

// failed decides about an error: a connection error is waited out (until a state
// changes, or a pause as the client's retry policy says, without end) and gives nil;
// any other is returned. Once the client has had a session (firstSession), that is
// an outage, which ctx bounds.
func (w *waiter) failed(ctx context.Context, err error) error {
	if !framework.IsRetryable(err) || ctx.Err() != nil {
		return err
	}
	w.pauses.Wait(ctx, w.wake)
	return ctx.Err()
}
