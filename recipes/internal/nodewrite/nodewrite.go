// Package nodewrite sends a recipe's writes to one node itself, for the recipes whose
// writes must not be sent twice blindly: the counter and the shared value.
//
// The client's node operations retry a lost reply by sending the request again,
// which is right for reads and wrong here: a conditional set whose first send applied
// is refused the second time for its stale version, and a caller that takes that for
// a lost race writes twice (Curator's DistributedAtomicValue adds twice). So Once
// sends a write exactly once, and Conditional sends a conditional write again after a
// lost reply but says that it did, so that the caller can decide what a refusal
// means, with TookVersion's help.
package nodewrite

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/cenkalti/backoff/v4"

	"github.com/zkrecipes/zkrecipes/framework"
)

// Node is one node a recipe writes to.
type Node struct {
	c    *framework.Client
	path string
	full string // the server's path, namespace included
}

// New is the node at path (checked by the recipe) of c.
func New(c *framework.Client, path string) Node {
	full := path
	if ns := c.Namespace(); ns != "" {
		full = "/" + ns + path
	}
	return Node{c: c, path: path, full: full}
}

// errInFlight marks a request that was sent and not answered before ctx ended.
type errInFlight struct{ ctx error }

func (e errInFlight) Error() string {
	return fmt.Sprintf("stopped waiting for the answer: %v", e.ctx)
}
func (e errInFlight) Unwrap() error { return e.ctx }

// errNotSent marks the end of a write's wait for a session, before anything was
// sent: WaitConnected's error (before the client's first session, one connection
// timeout; after it, ctx's end; or the client's close). It reads as its cause.
type errNotSent struct{ err error }

func (e errNotSent) Error() string { return e.err.Error() }
func (e errNotSent) Unwrap() error { return e.err }

// Once sets the node's data if its version is version (-1: any), sending the request
// exactly once: it waits for a session, sends on the current connection, and waits
// for the answer or for ctx. A request cannot be taken back once sent, so when ctx
// ends first it is left to finish (go-zookeeper bounds it by its receive timeout);
// MaybeApplied then says so, as it does for an answer lost with the connection, the
// session or the client. Data larger than the client sends (framework.WithMaxDataSize)
// is refused before anything is sent, with an error wrapping framework.ErrDataTooLarge.
//
// The wait for a session is the client's (framework.Client.WaitConnected): before
// the client's first session, one connection timeout at most (unless the client was
// made WithRetryBeforeFirstConnection), ending with its *framework.ConnectError
// wrapping framework.ErrNoServer; after it, as long as ctx allows. A wait that ends
// without a session sent nothing, and MaybeApplied says so.
func (n Node) Once(ctx context.Context, data []byte, version int32) (*framework.Stat, error) {
	if size := len(n.full) + len(data); size > n.c.ForRecipes().MaxDataSize() {
		// The server would drop the connection, which looks like a fault to everyone.
		return nil, fmt.Errorf("%w: %d bytes of data and path for %s, at most %d (framework.WithMaxDataSize)",
			framework.ErrDataTooLarge, size, n.path, n.c.ForRecipes().MaxDataSize())
	}
	// A ctx already over sends nothing: the caller gave up before the write began,
	// and must be able to tell that nothing was written.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := n.c.WaitConnected(ctx); err != nil {
		return nil, errNotSent{err}
	}
	conn := n.c.Conn()
	type answer struct {
		stat *framework.Stat
		err  error
	}
	ch := make(chan answer, 1)
	go func() {
		stat, err := conn.Set(n.full, data, version)
		ch <- answer{stat, err}
	}()
	select {
	case a := <-ch:
		if a.err != nil && n.c.ForRecipes().Context().Err() != nil && framework.IsRetryable(a.err) {
			return nil, fmt.Errorf("%w (%w)", framework.ErrClosed, a.err)
		}
		return a.stat, a.err
	case <-ctx.Done():
		return nil, errInFlight{ctx.Err()}
	}
}

// MaybeApplied tells whether a write's error leaves it possibly applied: it was sent
// and its answer lost with the connection, the session, the client or ctx. A write
// whose wait for a session ended without one (Once's *framework.ConnectError before
// the client's first session, which wraps the retryable framework.ErrNoServer) was
// not sent, and is not maybe applied. That is known from where the error came, not
// from its type: a node operation's *framework.ConnectError may follow earlier
// attempts that were sent.
func MaybeApplied(err error) bool {
	if errors.As(err, new(errNotSent)) {
		return false
	}
	return framework.IsRetryable(err) || errors.Is(err, framework.ErrSessionExpired) || errors.As(err, new(errInFlight))
}

// Conditional sets the node's data if its version is still version. After a lost
// reply it sends the same request again, as often as the client's retry policy
// allows: every send is conditional on the same version, so at most one applies, and
// an OK means this one did. resent says that an earlier send's answer was lost, which
// makes a refusal ambiguous: the earlier send may be what moved the version on. A
// wait for a session that ends without one (see Once) ends it with that error, and
// adds nothing to resent.
func (n Node) Conditional(ctx context.Context, data []byte, version int32) (stat *framework.Stat, resent bool, err error) {
	err = backoff.Retry(func() error {
		var err error
		stat, err = n.Once(ctx, data, version)
		switch {
		case err == nil || !MaybeApplied(err):
			return backoff.Permanent(err)
		case errors.As(err, new(errInFlight)) || errors.Is(err, framework.ErrClosed):
			resent = true
			return backoff.Permanent(err)
		}
		resent = true
		return err
	}, backoff.WithContext(n.c.ForRecipes().RetryPolicy().NewBackOff(), ctx))
	return stat, resent, err
}

// TookVersion proves that a write of ours, conditional on before's version, did not
// apply: the same node (same czxid) is now exactly one version further on, with data
// other than ours, so the one write that version allowed was another writer's.
func TookVersion(before, now *framework.Stat, nowData, ours []byte) bool {
	return before != nil && now != nil && before.Czxid != 0 && now.Czxid == before.Czxid &&
		now.Version == before.Version+1 && !bytes.Equal(nowData, ours)
}
