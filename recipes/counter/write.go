package counter

import (
	"context"
	"errors"
	"fmt"

	"github.com/cenkalti/backoff/v4"
	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/framework"
)

// The client's node operations retry a lost reply by sending the request again,
// which is right for reads and wrong for a counter: a conditional set whose first
// send applied is refused the second time with a bad version, and a caller that
// takes that for a lost race adds twice (Curator's DistributedAtomicValue does). So
// the counter sends its writes itself, once per call of sendOnce, and decides what a
// lost reply means.

// errInFlight marks a request that was sent and not answered before ctx ended.
type errInFlight struct{ ctx error }

func (e errInFlight) Error() string {
	return fmt.Sprintf("stopped waiting for the answer: %v", e.ctx)
}
func (e errInFlight) Unwrap() error { return e.ctx }

// sendOnce waits for a session, sends one request on the current connection, and
// waits for its answer or for ctx. A request cannot be taken back once sent, so
// when ctx ends first it is left to finish (go-zookeeper bounds it by its receive
// timeout) and the error is an errInFlight.
func (c *Counter) sendOnce(ctx context.Context, send func(*zk.Conn) (*zk.Stat, error)) (*zk.Stat, error) {
	if err := c.client.WaitConnected(ctx); err != nil {
		return nil, err
	}
	conn := c.client.Conn()
	type answer struct {
		stat *zk.Stat
		err  error
	}
	ch := make(chan answer, 1)
	go func() {
		stat, err := send(conn)
		ch <- answer{stat, err}
	}()
	select {
	case a := <-ch:
		if a.err != nil && c.client.Context().Err() != nil && framework.IsRetryable(a.err) {
			return nil, fmt.Errorf("%w (%w)", framework.ErrClosed, a.err)
		}
		return a.stat, a.err
	case <-ctx.Done():
		return nil, errInFlight{ctx.Err()}
	}
}

// maybeApplied tells whether a request's error leaves it possibly applied: it was
// sent and its answer lost with the connection, the session, the client or ctx.
func maybeApplied(err error) bool {
	return framework.IsRetryable(err) || errors.Is(err, zk.ErrSessionExpired) || errors.As(err, new(errInFlight))
}

// setVersion sets the node's data if its version is still version. After a lost
// reply it sends the same request again, as often as the client's retry policy
// allows: both are conditional on the same version, so at most one can apply, and
// an OK means this one did. sent says that an earlier send's reply was lost, which
// makes a refusal ambiguous (the earlier send may be what moved the version on).
func (c *Counter) setVersion(ctx context.Context, data []byte, version int32) (sent bool, err error) {
	err = backoff.Retry(func() error {
		_, err := c.sendOnce(ctx, func(conn *zk.Conn) (*zk.Stat, error) { return conn.Set(c.full, data, version) })
		switch {
		case err == nil || !maybeApplied(err):
			return backoff.Permanent(err)
		case errors.As(err, new(errInFlight)) || errors.Is(err, framework.ErrClosed):
			sent = true
			return backoff.Permanent(err)
		}
		sent = true
		return err
	}, backoff.WithContext(c.client.RetryPolicy().NewBackOff(), ctx))
	return sent, err
}
