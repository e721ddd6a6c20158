package framework

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/go-zookeeper/zk"
)

// orSetRounds bounds how often a create OrSetData goes between a create that finds
// the node and a set that finds it gone, while others create and delete it.
const orSetRounds = 5

// OrSetData makes Create overwrite the data of a node that already exists (any
// version) instead of failing with zk.ErrNodeExists, as Curator's orSetData does;
// Create then returns the node's path. A node deleted between the create and the
// set is created again. It also makes a create safe to retry after a lost reply.
// When ctx ends while the request is in flight, a node the call created is deleted,
// but one whose data it overwrote keeps the new data.
func OrSetData() CreateOption { return func(o *createOptions) { o.orSetData = true } }

// WithNodeACL gives the node this ACL instead of the client's ACL provider's
// (WithACL); parents made by CreatingParents keep the provider's. An empty ACL is
// an error wrapping ErrInvalidCreate.
func WithNodeACL(acl ...zk.ACL) CreateOption {
	return func(o *createOptions) { o.acl, o.aclSet = append([]zk.ACL(nil), acl...), true }
}

func (o createOptions) check() error {
	if o.aclSet && len(o.acl) == 0 {
		return fmt.Errorf("%w: an empty node ACL", ErrInvalidCreate)
	}
	return nil
}

// nodeACL is the ACL of the node a create makes at the server path full.
func (c *Client) nodeACL(full string, o createOptions) []zk.ACL {
	if o.aclSet {
		return o.acl
	}
	return c.aclFor(full)
}

// orSet turns a create that found the node into a set of its data. create is the
// create to send again when the set finds the node gone; overwrote reports that
// the node was not ours to delete.
func orSet(conn *zk.Conn, full string, data []byte, o createOptions, create func() (string, error), overwrote *atomic.Bool) (string, error) {
	var (
		p   string
		err error
	)
	for range orSetRounds {
		o.raced()
		if _, err = conn.Set(full, data, -1); !errors.Is(err, zk.ErrNoNode) {
			if err == nil {
				overwrote.Store(true)
			}
			return full, err
		}
		o.raced()
		if p, err = create(); !errors.Is(err, zk.ErrNodeExists) {
			return p, err
		}
	}
	return "", fmt.Errorf("created and deleted by others %d times over: %w", orSetRounds, err)
}

// raced runs the test seam between two requests of a create OrSetData.
func (o createOptions) raced() {
	if o.between != nil {
		o.between()
	}
}
