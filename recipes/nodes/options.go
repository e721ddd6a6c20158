package nodes

import (
	"errors"
	"fmt"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/zkrecipes/recipes/internal/lifecycle"
)

var (
	// ErrInvalid is wrapped by the errors for bad arguments.
	ErrInvalid = errors.New("nodes: invalid argument")
	// ErrStarted is returned by a second Start; ErrClosed after Close. (A closed
	// client's errors wrap framework.ErrClosed instead.)
	ErrStarted, ErrClosed = lifecycle.Errors("nodes")
	// ErrNodeExists is wrapped by the error of a Start that found the path taken by a
	// node that is not ours: another session's ephemeral node (the error names the
	// session), or a persistent node this PersistentNode did not make. Such a node is
	// never overwritten or deleted.
	ErrNodeExists = errors.New("nodes: the path holds a node that is not ours")
	// ErrReadOnly is wrapped by the error of SetData on a ReadOnly node.
	ErrReadOnly = errors.New("nodes: the node is read-only")
)

// maxTTL is ZooKeeper's largest TTL: 40 bits of milliseconds.
const maxTTL = (1<<40 - 1) * time.Millisecond

// Option sets the kind of node a PersistentNode keeps. An option given a value it
// cannot take, or options that contradict each other, make New return an error
// wrapping ErrInvalid that names the options.
type Option func(*options) error

type options struct {
	ephemeral, persistent, sequential, protected bool
	readOnly                                     bool
	ttl                                          time.Duration
	ttlSet                                       bool
}

// Ephemeral keeps an ephemeral node: it goes with the session that made it, and the
// PersistentNode makes it again in the next session. This is the default.
func Ephemeral() Option {
	return func(o *options) error {
		o.ephemeral = true
		return nil
	}
}

// Persistent keeps a persistent node, which outlives sessions (Close still deletes
// it). Default: Ephemeral.
func Persistent() Option {
	return func(o *options) error {
		o.persistent = true
		return nil
	}
}

// Sequential appends the server's ten-digit sequence number to the name at the first
// create; later re-creates keep that name, as Curator's do. It needs Protected: a
// sequential create whose reply is lost with the connection cannot be found again
// otherwise, and would leave a second node. Default off.
func Sequential() Option {
	return func(o *options) error {
		o.sequential = true
		return nil
	}
}

// Protected names the node _c_<uuid>-<name> (Curator's protected mode), so that a
// first create whose reply was lost is found again by its uuid. Default off.
func Protected() Option {
	return func(o *options) error {
		o.protected = true
		return nil
	}
}

// TTL keeps a persistent node with a time to live: the server deletes it once it
// has had no children and no change for d, and the PersistentNode makes it again,
// as it would after any deletion. The server must allow TTL nodes
// (zookeeper.extendedTypesEnabled=true); Start fails with an error wrapping
// framework.ErrTTLDisabled where it does not. d must be from 1ms to ZooKeeper's
// largest TTL, 2^40-1 ms (about 35 years). Default: no TTL.
func TTL(d time.Duration) Option {
	return func(o *options) error {
		if d < time.Millisecond || d > maxTTL {
			return fmt.Errorf("TTL %v is not between 1ms and %v", d, maxTTL)
		}
		o.ttl, o.ttlSet = d, true
		return nil
	}
}

// ReadOnly makes the node, at every create, with the client's ACL for its path cut
// to READ (framework.WithNodePerms): ZooKeeper then refuses every change of its data
// or its ACL for the node's whole life, so that readers may trust its data not to
// change, while its owner can still delete it (the parent's ACL decides that).
// SetData is refused with an error wrapping ErrReadOnly. Default off.
func ReadOnly() Option {
	return func(o *options) error {
		o.readOnly = true
		return nil
	}
}

func newOptions(c *framework.Client, path string, opts []Option) (options, error) {
	var o options
	if err := args.Check(c, path); err != nil {
		return o, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := args.Apply(&o, opts); err != nil {
		return o, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	// What no option can see alone: options that contradict each other.
	var problem string
	switch {
	case o.ephemeral && (o.persistent || o.ttlSet):
		problem = "Ephemeral with Persistent or TTL: a node is one or the other"
	case o.sequential && !o.protected:
		problem = "Sequential needs Protected: a sequential create whose reply is lost cannot be found again, and would leave a second node"
	}
	if problem != "" {
		return o, fmt.Errorf("%w: %s", ErrInvalid, problem)
	}
	o.ephemeral = !o.persistent && !o.ttlSet
	return o, nil
}
