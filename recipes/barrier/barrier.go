package barrier

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/internal/attempt"
)

// Barrier holds processes back while its node exists: Curator's DistributedBarrier.
type Barrier struct {
	c    *framework.Client
	path string
	tel  telemetry
}

// New makes a Barrier on the node at path. Nothing is sent to ZooKeeper until a
// method is called.
func New(c *framework.Client, path string) (*Barrier, error) {
	if err := checkArgs(c, path); err != nil {
		return nil, err
	}
	return &Barrier{c: c, path: path, tel: newTelemetry(c, "barrier", opWait)}, nil
}

// Set raises the barrier: it makes its node (persistent, with container parents),
// if it is not there yet.
func (b *Barrier) Set(ctx context.Context) error {
	_, err := b.c.Create(ctx, b.path, localAddress(), framework.CreatingParentContainers())
	if err != nil && !errors.Is(err, framework.ErrNodeExists) {
		return fmt.Errorf("barrier: setting %s: %w", b.path, err)
	}
	return nil
}

// Remove lowers the barrier: every Wait returns. Removing a barrier that is not set
// does nothing.
func (b *Barrier) Remove(ctx context.Context) error {
	err := b.c.Delete(ctx, b.path, -1)
	if err != nil && !errors.Is(err, framework.ErrNoNode) {
		return fmt.Errorf("barrier: removing %s: %w", b.path, err)
	}
	return nil
}

// Wait blocks until the barrier is not set: at once if it is not, else until it is
// removed (a ctx that has ended already gives its error, even for a barrier not
// set: Wait looks at the server first). It waits through lost connections and sessions; it returns early only
// when ctx ends (an error wrapping ctx's), the client closes, or ZooKeeper refuses
// to let it look (an ACL). Called before its client's first session, it waits for
// one as the client's operations do: one connection timeout at most, unless the
// client was made WithRetryBeforeFirstConnection; when none comes in time, it
// returns an error wrapping the client's *framework.ConnectError (and
// framework.ErrNoServer).
func (b *Barrier) Wait(ctx context.Context) (err error) {
	call := b.tel.recipe.Call(ctx, opWait, b.path)
	defer func() { call.End(b.tel.waits, outcome(err), err) }()
	if err := attempt.FirstSession(ctx, b.c); err != nil {
		return fmt.Errorf("barrier: waiting on %s: %w", b.path, err)
	}
	w := newWaiter(b.c)
	defer w.stop()
	for {
		ok, _, watch, err := b.c.ExistsW(ctx, b.path)
		switch {
		case err != nil:
			err = w.failed(ctx, err)
		case !ok:
			return nil
		default:
			err = w.await(ctx, watch)
		}
		if err != nil {
			return fmt.Errorf("barrier: waiting on %s: %w", b.path, err)
		}
	}
}
