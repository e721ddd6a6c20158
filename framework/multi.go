package framework

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
)

// ErrInvalidOp is wrapped by the error of a Multi given an operation it cannot send:
// a zero Op, or a CreateOp with an option a transaction cannot carry.
var ErrInvalidOp = errors.New("framework: invalid transaction operation")

// Op is one operation of a transaction (see Multi), made by CreateOp, DeleteOp,
// SetOp or CheckOp. The zero Op is invalid.
type Op struct {
	kind    opKind
	path    string
	data    []byte
	version int32
	create  createOptions
	bad     error // a CreateOption a transaction cannot carry
}

type opKind int

const (
	kindNone opKind = iota
	kindCreate
	kindDelete
	kindSet
	kindCheck
)

var opKindNames = [...]string{"invalid", "create", "delete", "set", "check"}

func (o Op) String() string { return opKindNames[o.kind] + " " + o.path }

// CreateOp creates a node, as Create does, with Ephemeral, Sequential, WithNodeACL
// and WithNodePerms allowed.
// Container, Protected, CreatingParents and CreatingParentContainers are not:
// ZooKeeper's transactions carry neither a container create nor a lookup, so Multi
// refuses them (ErrInvalidOp).
func CreateOp(path string, data []byte, opts ...CreateOption) Op {
	op := Op{kind: kindCreate, path: path, data: data}
	for _, opt := range opts {
		if opt == nil {
			op.bad = errors.New("nil CreateOption")
			continue
		}
		opt(&op.create)
	}
	o := op.create
	if op.bad == nil && (o.container || o.protected || o.parents) {
		op.bad = errors.New("Container, Protected, CreatingParents and CreatingParentContainers cannot be part of a transaction")
	}
	if err := o.check(); op.bad == nil && err != nil {
		op.bad = err
	}
	return op
}

// DeleteOp deletes a node if its version matches (-1 matches any).
func DeleteOp(path string, version int32) Op {
	return Op{kind: kindDelete, path: path, version: version}
}

// SetOp writes a node's data if its version matches (-1 matches any).
func SetOp(path string, data []byte, version int32) Op {
	return Op{kind: kindSet, path: path, data: data, version: version}
}

// CheckOp changes nothing: it fails the transaction unless the node exists with this
// version (-1: unless it exists).
func CheckOp(path string, version int32) Op {
	return Op{kind: kindCheck, path: path, version: version}
}

// OpResult is what one operation of an applied transaction returned.
type OpResult struct {
	// Path is the node the operation touched: for a CreateOp, the path made, with its
	// sequence number if any. Without the namespace, like every path the client gives.
	Path string
	// Stat is the node's new stat, for a SetOp; nil for the others.
	Stat *Stat
}

// MultiError is the error of a transaction that the server refused: nothing of it
// was applied. errors.Is sees the refusing operation's error (ErrBadVersion,
// ErrNoNode, ErrNodeExists, ErrNotEmpty, ErrNoAuth...).
type MultiError struct {
	Index int   // of the operation that failed, in the order given to Multi
	Op    Op    // that operation
	Err   error // why the server refused it
	// AfterRetry: an earlier attempt of the same transaction failed on a connection
	// error, so it may have been applied then, and this refusal may be the server
	// finding its effects (the node created, the version moved).
	AfterRetry bool
}

func (e *MultiError) Error() string {
	s := fmt.Sprintf("framework: transaction refused at operation %d (%v): %v", e.Index, e.Op, e.Err)
	if e.AfterRetry {
		s += " (after a retry: an earlier attempt may have been applied)"
	}
	return s
}

func (e *MultiError) Unwrap() error { return e.Err }

// Multi runs ops as one ZooKeeper transaction: all of them are applied, in order, or
// none. It returns one OpResult per op, or an error: a *MultiError naming the op the
// server refused, or the error that kept the transaction from an answer. Paths go
// under the namespace, created nodes get the ACL provider's ACL, and connection
// errors are retried as for single operations; a transaction whose reply was lost is
// sent again, so a non-idempotent one (a create, a versioned set) may then be refused
// for what its first attempt did (MultiError.AfterRetry says so). No ops: no request,
// no results.
//
// If ctx ends while the transaction is in flight, Multi waits for its answer, as
// Create does: if the server applied it, the nodes it created are deleted (its other
// effects stay) before Multi returns ctx's error; a server that cannot be reached
// within 5 s has the deletes go on in the background.
func (c *Client) Multi(ctx context.Context, ops ...Op) ([]OpResult, error) {
	reqs, err := c.multiRequests(ops)
	if err != nil || len(ops) == 0 {
		return nil, err
	}
	undo := func(ctx context.Context, res []zk.MultiResponse, err error) {
		if err != nil {
			return
		}
		for i := len(res) - 1; i >= 0; i-- { // children before the parents made before them
			if i < len(ops) && ops[i].kind == kindCreate {
				c.deleteUntilDone(ctx, res[i].String, -1)
			}
		}
	}
	var res []zk.MultiResponse
	retried := false
	start := c.metrics.start()
	err = c.retry(ctx, opMulti, func(ctx context.Context) error {
		var err error
		res, err = attempt(c, ctx, "", func(conn *zk.Conn, _ string) ([]zk.MultiResponse, error) {
			return conn.Multi(reqs...)
		}, undo)
		if IsRetryable(err) {
			retried = true
		}
		return err
	})
	c.metrics.request(ctx, opMulti, start, err)
	if err == nil {
		return c.multiResults(ops, res), nil
	}
	for i, r := range res {
		if r.Error != nil {
			return nil, &MultiError{Index: i, Op: ops[i], Err: c.explain(r.Error), AfterRetry: retried}
		}
	}
	return nil, fmt.Errorf("framework: transaction of %d operations: %w", len(ops), c.explain(err))
}

// multiRequests checks ops and turns them into go-zookeeper's requests on server
// paths.
func (c *Client) multiRequests(ops []Op) ([]any, error) {
	reqs := make([]any, len(ops))
	size := 0
	for i, op := range ops {
		if op.kind == kindNone {
			return nil, fmt.Errorf("%w: operation %d is the zero Op", ErrInvalidOp, i)
		}
		if op.bad != nil {
			return nil, fmt.Errorf("%w: operation %d (%v): %w", ErrInvalidOp, i, op, op.bad)
		}
		full, err := c.fix(op.path, op.kind != kindCheck)
		if err != nil {
			return nil, fmt.Errorf("%w: operation %d: %w", ErrInvalidOp, i, err)
		}
		if full == "/" && op.kind != kindCheck {
			return nil, fmt.Errorf("%w: operation %d: cannot %s the root", ErrInvalidOp, i, opKindNames[op.kind])
		}
		size += len(full) + len(op.data)
		switch op.kind {
		case kindCreate:
			reqs[i] = &zk.CreateRequest{Path: full, Data: op.data, Acl: c.nodeACL(full, op.create), Flags: op.create.flags()}
		case kindDelete:
			reqs[i] = &zk.DeleteRequest{Path: full, Version: op.version}
		case kindSet:
			reqs[i] = &zk.SetDataRequest{Path: full, Data: op.data, Version: op.version}
		case kindCheck:
			reqs[i] = &zk.CheckVersionRequest{Path: full, Version: op.version}
		}
	}
	if size > c.opts.maxData {
		return nil, fmt.Errorf("%w: %d bytes of data and paths in a transaction of %d operations, at most %d (WithMaxDataSize)",
			ErrDataTooLarge, size, len(ops), c.opts.maxData)
	}
	return reqs, nil
}

func (c *Client) multiResults(ops []Op, res []zk.MultiResponse) []OpResult {
	out := make([]OpResult, len(ops))
	for i, op := range ops {
		out[i].Path = op.path
		if i >= len(res) {
			continue
		}
		switch op.kind {
		case kindCreate:
			out[i].Path = c.unfix(res[i].String)
		case kindSet:
			out[i].Stat = res[i].Stat
		}
	}
	return out
}
