package attempt

import (
	"context"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/zkrecipes/zkrecipes/framework"
)

// Pauses are the waits between the failed attempts of a loop that never gives up (a
// latch following its election, a persistent node keeping its node, a barrier's
// waiter): the client's retry policy's pauses, started over where the policy would
// stop, and a second each if it never pauses.
type Pauses struct {
	Client *framework.Client
	b      backoff.BackOff
}

// Wait waits for the next pause, cut short when wake receives (nil: never) or ctx
// ends.
func (p *Pauses) Wait(ctx context.Context, wake <-chan struct{}) {
	if p.b == nil {
		p.b = p.Client.ForRecipes().RetryPolicy().NewBackOff()
	}
	d := p.b.NextBackOff()
	if d == backoff.Stop {
		p.b.Reset()
		if d = p.b.NextBackOff(); d == backoff.Stop {
			d = time.Second
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-wake:
	case <-ctx.Done():
	}
}

// Reset starts the pauses over, after an attempt that succeeded.
func (p *Pauses) Reset() { p.b = nil }
