package framework

import (
	"context"
	"fmt"

	"github.com/go-zookeeper/zk"
)

type aclResult struct {
	acl  []zk.ACL
	stat *zk.Stat
}

// GetACL reads a node's ACL, and its stat, whose Aversion a SetACL names to change
// it only if nobody else did.
func (c *Client) GetACL(ctx context.Context, path string) ([]zk.ACL, *zk.Stat, error) {
	r, err := call(c, ctx, opGetACL, path, false, func(conn *zk.Conn, p string) (aclResult, error) {
		acl, stat, err := conn.GetACL(p)
		return aclResult{acl, stat}, err
	})
	return r.acl, r.stat, err
}

// SetACL replaces a node's ACL if its ACL version (Stat.Aversion) matches aversion
// (-1 matches any); a mismatch fails with an error wrapping zk.ErrBadVersion. An
// empty acl is an error wrapping ErrInvalidOption, since the server would refuse it.
// Retried on connection errors like every operation: with a version, a retry after
// a lost reply that had been applied fails with zk.ErrBadVersion.
func (c *Client) SetACL(ctx context.Context, path string, acl []zk.ACL, aversion int32) (*zk.Stat, error) {
	if len(acl) == 0 {
		return nil, fmt.Errorf("%w: empty ACL for %s", ErrInvalidOption, path)
	}
	return call(c, ctx, opSetACL, path, true, func(conn *zk.Conn, p string) (*zk.Stat, error) {
		return conn.SetACL(p, acl, aversion)
	})
}
