package attempt

import (
	"context"
	"errors"

	"github.com/zkrecipes/zkrecipes/framework"
)

// FirstSession waits for c's first session, if it has never had one, as long as the
// client's operations would (framework.Client.WaitConnected): one connection timeout
// at most, unless the client was made WithRetryBeforeFirstConnection. A recipe whose
// loop waits out connection errors as outages calls it before its first request:
// before a first session such an outage would never end. Its error is only that
// wait running out, the client's *framework.ConnectError; a wait ended by ctx or by
// the client's close gives nil, and the recipe's own path reports those as it always
// does.
func FirstSession(ctx context.Context, c *framework.Client) error {
	if c.State() != framework.Latent {
		return nil
	}
	err := c.WaitConnected(ctx)
	if err == nil || ctx.Err() != nil || errors.Is(err, framework.ErrClosed) {
		return nil
	}
	return err
}
