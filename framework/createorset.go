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

// WithNodePerms cuts each entry of the node's ACL (the ACL provider's for its path,
// or WithNodeACL's) to the permissions in perms, a sum of zk.PermRead, zk.PermWrite,
// ...; entries left with none are left out. The same ids keep only what perms
// allows: WithNodePerms(zk.PermRead) makes a node whose data and ACL no one can change
// for its whole life (but a super user, or any client of a server run with
// skipACL=yes), while whoever the parent's ACL grants DELETE can still delete it.
// Parents made by CreatingParents keep the provider's ACL. perms 0 is an error
// wrapping ErrInvalidCreate. Default: the ACL as it is.
func WithNodePerms(perms int32) CreateOption {
	return func(o *createOptions) { o.perms, o.permsSet = perms, true }
}

func (o createOptions) check() error {
	if o.aclSet && len(o.acl) == 0 {
		return fmt.Errorf("%w: an empty node ACL", ErrInvalidCreate)
	}
	if o.permsSet && o.perms&zk.PermAll == 0 {
		return fmt.Errorf("%w: no permission in node perms %#x", ErrInvalidCreate, o.perms)
	}
	return nil
}

// nodeACL is the ACL of the node a create makes at the server path full.
func (c *Client) nodeACL(full string, o createOptions) []zk.ACL {
	acl := o.acl
	if !o.aclSet {
		acl = c.aclFor(full)
	}
	if !o.permsSet {
		return acl
	}
	cut := make([]zk.ACL, 0, len(acl))
	for _, a := range acl {
		if a.Perms&o.perms != 0 {
			a.Perms &= o.perms
			cut = append(cut, a)
		}
	}
	return cut
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
