package cache

import (
	"errors"
	"fmt"
	"math"
)

// Option configures a Cache. An option given a value it cannot take makes New return
// an error wrapping ErrInvalid that names the option.
type Option func(*options) error

type options struct {
	depth         int
	noData        bool
	trustReadOnly bool
	selector      func(path string) bool
}

func defaultOptions() options { return options{depth: math.MaxInt} }

// Depth limits how far below the path the cache follows: 0 the node alone (Curator's
// NodeCache), 1 the node and its children (PathChildrenCache), n nodes down to n
// levels below it. Default: the whole subtree (TreeCache, CuratorCache). A negative
// n is refused.
func Depth(n int) Option {
	return func(o *options) error {
		if n < 0 {
			return fmt.Errorf("Depth: %d is negative", n)
		}
		o.depth = n
		return nil
	}
}

// WithoutData keeps stats only: Node.Data is nil, and the copy costs little memory
// however large the data. Changes are still reported (by version). Default: data
// kept.
func WithoutData() Option {
	return func(o *options) error {
		o.noData = true
		return nil
	}
}

// TrustReadOnly reads without a data watch every node below the path whose ACL
// grants no one WRITE or ADMIN: ZooKeeper refuses every change of such a node's data
// and ACL for its whole life (recipes/nodes' ReadOnly makes such nodes). The cache
// reads the ACL of each node it has not seen yet (one getACL beside the getData),
// and keeps a data watch on every other node. Where a data watch would have told it
// that such a node was deleted and made again between two listings of its parent, it
// counts instead: ZooKeeper adds one to the parent's cversion for each child made and
// each deleted, so when a listing's cversion has grown by more than the names added
// and removed, the cache checks each such node again (one getACL, whose stat says
// whether it is still the node it read) and reports a new one as Deleted then
// Created. A super user, or any client of a server run with skipACL=yes, can still
// change such a node unseen. Default off: every node keeps its data watch. It
// matters on one-shot watches only: on a persistent watch the cache sets no data
// watch at all, and the option changes nothing.
func TrustReadOnly() Option {
	return func(o *options) error {
		o.trustReadOnly = true
		return nil
	}
}

// WithSelector follows only the subtrees that follow accepts: it is asked once for
// each node below the cache's path, with the node's path, before the node is read;
// false leaves the node and everything under it out of the copy, with no read and no
// watch. It runs on the cache's goroutine: it must not block, nor call the cache.
// Default: every node. A nil follow is refused.
func WithSelector(follow func(path string) bool) Option {
	return func(o *options) error {
		if follow == nil {
			return errors.New("WithSelector: nil selector")
		}
		o.selector = follow
		return nil
	}
}
