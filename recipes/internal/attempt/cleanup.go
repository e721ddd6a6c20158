package attempt

import (
	"context"
	"time"
)

// cleanupTimeout bounds the undoing of a failed attempt (the delete of a node we give
// up); past it the client's guaranteed delete carries on in the background.
const cleanupTimeout = 5 * time.Second

// CleanupContext is the context for undoing what a call did when the call gives up:
// ctx's values without its end (ctx may be the one that ended), bounded by
// cleanupTimeout.
func CleanupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
}
