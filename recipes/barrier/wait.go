package barrier

import (
	"context"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/framework"
)

// waiter is what a barrier waits on: its one watch, the client's state changes (a
// session lost, a connection back), and the caller's context.
type waiter struct {
	c       *framework.Client
	wake    chan struct{}
	stop    func()
	backoff backoff.BackOff
}

func newWaiter(c *framework.Client) *waiter {
	w := &waiter{c: c, wake: make(chan struct{}, 1)}
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
func (w *waiter) await(ctx context.Context, watch <-chan zk.Event) error {
	w.backoff = nil
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
// any other is returned.
func (w *waiter) failed(ctx context.Context, err error) error {
	if !framework.IsRetryable(err) || ctx.Err() != nil {
		return err
	}
	if w.backoff == nil {
		w.backoff = w.c.RetryPolicy().NewBackOff()
	}
	d := w.backoff.NextBackOff()
	if d == backoff.Stop {
		w.backoff.Reset()
		if d = w.backoff.NextBackOff(); d == backoff.Stop {
			d = time.Second
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-w.wake:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}
