package framework

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/framework/internal/wire"
)

// ErrInvalidCreate is returned for contradictory create options.
var ErrInvalidCreate = errors.New("framework: invalid create options")

// ErrDataTooLarge is wrapped by the error of a Create or Set whose data and path are
// larger than the client sends (WithMaxDataSize).
var ErrDataTooLarge = errors.New("framework: data too large")

// checkData refuses a request the server would answer by dropping the connection:
// its data and its server path (namespace included, and a protected create's prefix)
// together above the limit, which leaves room for the ACL and the request's header.
func (c *Client) checkData(path string, protected bool, data []byte) error {
	size := len(data) + len(joinNamespace(c.namespace, path))
	if protected {
		size += protectedPrefixLen
	}
	if size > c.opts.maxData {
		return fmt.Errorf("%w: %d bytes of data and path for %s, at most %d (WithMaxDataSize, for servers with a larger jute.maxbuffer)",
			ErrDataTooLarge, size, path, c.opts.maxData)
	}
	return nil
}

// ErrTTLDisabled is wrapped by the error of a TTL create that the server refused
// because it does not allow TTL nodes (see TTL).
var ErrTTLDisabled = errors.New("framework: the server does not allow TTL nodes (it needs zookeeper.extendedTypesEnabled=true)")

// unimplemented is how go-zookeeper reports ZooKeeper's UNIMPLEMENTED (-6), which
// it has no error value for: what a server without extended types answers a TTL create.
const unimplemented = "unknown error: -6"

// CreateOption sets how Create makes a node.
type CreateOption func(*createOptions)

type createOptions struct {
	ephemeral, sequential, container, protected bool
	parents, parentContainers                   bool // create missing parents; as containers
	ttl                                         time.Duration
	orSetData, aclSet                           bool     // createorset.go
	acl                                         []zk.ACL // WithNodeACL's
	perms                                       int32    // WithNodePerms's, if permsSet
	permsSet                                    bool
	afterCreate                                 func() error // test seam: runs after the server applied a create
	between                                     func()       // test seam: runs before each set and create of OrSetData's
	trace                                       *CreateTrace // Plumbing.Traced's
}

// Ephemeral: the node lives as long as the session that made it.
func Ephemeral() CreateOption { return func(o *createOptions) { o.ephemeral = true } }

// Sequential: the server appends a ten-digit sequence number to the name.
func Sequential() CreateOption { return func(o *createOptions) { o.sequential = true } }

// Container: the server deletes the node some time after its last child goes.
func Container() CreateOption { return func(o *createOptions) { o.container = true } }

// Protected names the node _c_<uuid>-<name> (Curator's layout), so that a create
// whose reply was lost with the connection can be found again: the retry looks for
// the uuid among the parent's children and accepts a node found only if its
// ephemeral owner is the current session. A create that fails for good deletes what
// it may have made: before it returns when its ctx ended (see Create), in the
// background when the retry policy gave up or the client closed.
func Protected() CreateOption { return func(o *createOptions) { o.protected = true } }

// TTL makes a persistent node that the server deletes once it has had no children
// and no change for d (ZooKeeper rounds d to whole milliseconds). The server must
// allow TTL nodes (zookeeper.extendedTypesEnabled=true, a system property or a
// zoo.cfg line "extendedTypesEnabled=true"); one that does not refuses the create
// with an error wrapping ErrTTLDisabled.
func TTL(d time.Duration) CreateOption { return func(o *createOptions) { o.ttl = d } }

// maxTTL is ZooKeeper's largest TTL: 40 bits of milliseconds.
const maxTTL = (1<<40 - 1) * time.Millisecond

// CreatingParents creates missing parents as ordinary persistent nodes, which stay
// when their last child goes: Curator's creatingParentsIfNeeded, for a tree of one's
// own (/app/config/feature). The last of CreatingParents and CreatingParentContainers
// given wins.
func CreatingParents() CreateOption {
	return func(o *createOptions) { o.parents, o.parentContainers = true, false }
}

// CreatingParentContainers creates missing parents as container nodes, which the
// server deletes some time after their last child goes (ZooKeeper's container check,
// once a minute by default): Curator's creatingParentContainersIfNeeded, what the
// recipes use, so that a lock or a barrier leaves nothing behind once done. Never for
// nodes a user expects to find again: an emptied /app/config would vanish.
func CreatingParentContainers() CreateOption {
	return func(o *createOptions) { o.parents, o.parentContainers = true, true }
}

func (o createOptions) flags() int32 {
	var f int32
	if o.ephemeral {
		f |= zk.FlagEphemeral
	}
	if o.sequential {
		f |= zk.FlagSequence
	}
	switch {
	case o.ttl > 0 && o.sequential:
		f = zk.FlagPersistentSequentialWithTTL
	case o.ttl > 0:
		f = zk.FlagTTL
	}
	return f
}

// Create makes a node and returns its path (with the sequence number, if any, and
// without the namespace). Retried on connection errors like every operation; only a
// protected create is safe to retry when sequential, since a lost reply would
// otherwise leave a second node, and a plain create whose reply was lost gets
// ErrNodeExists from its retry, for the node it made itself.
//
// When ctx ends while the request is in flight, Create waits for the request's answer
// and deletes the node it turns out to have made (not a node whose data OrSetData
// overwrote) before it returns ctx's error. A protected create whose attempt failed
// on a connection error, leaving the node's fate unknown, and whose ctx then ended
// does the same: it looks for the node by its protection id and deletes it before it
// returns. Another client that looks once Create has returned finds no node of it.
// That cleanup waits 5 s at most (cleanupTimeout), and not once Close begins: a
// server that cannot be reached in that time has the delete go on in the background
// until it succeeds, the session ends or the client closes (Close waits a second for
// it).
func (c *Client) Create(ctx context.Context, path string, data []byte, opts ...CreateOption) (string, error) {
	var o createOptions
	for _, opt := range opts {
		if opt == nil {
			return "", fmt.Errorf("%w: nil CreateOption", ErrInvalidCreate)
		}
		opt(&o)
	}
	if o.trace != nil {
		defer o.trace.wrote() // if nothing was written: nothing of the create is left to wait for
	}
	if o.container && (o.ephemeral || o.sequential) {
		return "", fmt.Errorf("%w: a container cannot be ephemeral or sequential", ErrInvalidCreate)
	}
	if o.ttl != 0 && (o.ttl < time.Millisecond || o.ttl > maxTTL || o.ephemeral || o.container) {
		return "", fmt.Errorf("%w: a TTL of %v (a TTL node is persistent, with a TTL from 1ms to %v)", ErrInvalidCreate, o.ttl, maxTTL)
	}
	if err := o.check(); err != nil {
		return "", err
	}
	if err := c.checkData(path, o.protected, data); err != nil {
		return "", err
	}
	full, err := c.fix(path, true)
	if err != nil {
		return "", err
	}
	if o.trace != nil && o.trace.list.path != "" {
		if o.trace.list.full, err = c.fix(o.trace.list.path, false); err != nil {
			return "", err
		}
	}
	if full == "/" {
		return "", fmt.Errorf("%w: cannot create the root", ErrInvalidPath)
	}
	var created string
	start := c.metrics.start()
	if o.protected {
		created, err = c.createProtected(ctx, full, data, o)
	} else {
		err = c.retry(ctx, opCreate, func(ctx context.Context) error {
			var err error
			created, err = c.createAttempt(ctx, full, data, o, "")
			return err
		})
	}
	if err != nil && o.ttl > 0 && err.Error() == unimplemented {
		err = fmt.Errorf("%w: %w", ErrTTLDisabled, err)
	}
	c.metrics.request(ctx, opCreate, start, err)
	if err != nil {
		return "", fmt.Errorf("framework: create %s: %w", path, c.explain(err))
	}
	return c.unfix(created), nil
}

// createProtected follows Curator's protected mode: one id for every retry; from the
// second attempt on, look for our node first. A node found under another session is
// a dead session's leftover, not ours (Curator's CURATOR-498).
func (c *Client) createProtected(ctx context.Context, full string, data []byte, o createOptions) (string, error) {
	parent := parentPath(full)
	// The id says whether anyone may read the node (saysAnyoneReads): asked of the
	// ACL its path gets, the path that says so.
	target, id := protectedPath(parent, baseName(full), true)
	readable := anyoneReads(c.nodeACL(target, o))
	if !readable {
		target, id = protectedPath(parent, baseName(full), false)
	}
	if o.trace != nil {
		f := c.creates.Follow(target, (*traceWritten)(o.trace))
		defer func() {
			c.creates.Stop(f)
			o.trace.mu.Lock()
			o.trace.czxid, o.trace.anyoneReads = f.Zxid(), readable
			o.trace.mu.Unlock()
		}()
	}
	var created string
	unknown := false // an attempt may have made the node without our knowing
	err := c.retry(ctx, opCreate, func(ctx context.Context) error {
		if unknown {
			found, err := c.findProtected(ctx, parent, id, o.ephemeral)
			if err != nil {
				return err
			}
			if found != "" {
				created = found
				return nil
			}
			unknown = false // none did
		}
		p, err := c.createAttempt(ctx, target, data, o, id)
		unknown = mayHaveCreated(err)
		created = p
		return err
	})
	switch {
	case err == nil || !unknown:
	case ctx.Err() != nil: // the caller gave up: delete what we may have made before returning
		c.cleanUp(func(ctx context.Context) { c.deleteProtectedUntilDone(ctx, parent, id) })
	default:
		c.deleteProtectedInBackground(parent, id)
	}
	return created, err
}

// mayHaveCreated says whether a create attempt that failed with err may have made
// its node: its request was sent and its answer lost (a connection error, or the
// client's close). A wait for a connection that ended without one sent nothing; a
// cancelled attempt has deleted what it made (attempt's undo).
func mayHaveCreated(err error) bool {
	if err == nil || isConnectError(err) {
		return false
	}
	return IsRetryable(err) || errors.Is(err, ErrClosed)
}

// isConnectError says whether err is a *ConnectError. Its target is made on the
// heap: a function of its own, so that a call that succeeds does not make it.
func isConnectError(err error) bool {
	var ce *ConnectError
	return errors.As(err, &ce)
}

// createAttempt sends one create, and creates missing parents when asked. id is the
// protection id, "" for an unprotected create.
func (c *Client) createAttempt(ctx context.Context, full string, data []byte, o createOptions, id string) (string, error) {
	var overwrote atomic.Bool // OrSetData set an existing node's data: not ours to delete
	// What a create that ctx's end cut short made; made only for a ctx that can end,
	// since no other call gives up (a closure less on every lock's create).
	var undo func(ctx context.Context, p string, err error)
	if ctx.Done() != nil {
		undo = func(ctx context.Context, p string, err error) {
			switch {
			case err == nil && !overwrote.Load():
				c.deleteUntilDone(ctx, p, -1)
			case id != "" && IsRetryable(err):
				c.deleteProtectedUntilDone(ctx, parentPath(full), id)
			}
		}
	}
	missing := false // a direct create found the parent missing: make the parents first
	req := func(conn *zk.Conn, full string) (string, error) {
		create := func() (string, error) {
			switch {
			case o.container:
				return conn.CreateContainer(full, data, zk.FlagContainer, c.nodeACL(full, o))
			case o.ttl > 0:
				return conn.CreateTTL(full, data, o.flags(), c.nodeACL(full, o), o.ttl)
			}
			return conn.Create(full, data, o.flags(), c.nodeACL(full, o))
		}
		p, err := "", error(zk.ErrNoNode)
		if !missing {
			p, err = create()
		}
		if errors.Is(err, zk.ErrNoNode) && o.parents {
			if err := c.mkdirs(conn, parentPath(full), o.parentContainers); err != nil {
				return "", err
			}
			p, err = create()
		}
		if errors.Is(err, zk.ErrNodeExists) && o.orSetData {
			p, err = orSet(conn, full, data, o, create, &overwrote)
		}
		if err == nil && o.afterCreate != nil {
			if err := o.afterCreate(); err != nil {
				return "", err
			}
		}
		return p, err
	}
	if o.plain() {
		p, err := attemptDirect(c, ctx, full, direct[string]{
			send: func(t *wire.Conn, full string) <-chan wire.Reply {
				if l := o.trace.listing(); l != nil {
					created, listed, watch := t.CreateThenList(full, data, c.nodeACL(full, o), o.flags(), l.full, l.watch)
					l.sent(listed, watch)
					return created
				}
				return t.Create(full, data, c.nodeACL(full, o), o.flags())
			},
			read: wire.Reply.PathReply,
		}, req, undo)
		if !errors.Is(err, zk.ErrNoNode) || !o.parents {
			return p, err
		}
		missing = true // made by go-zookeeper's requests: a rare path (a lock's first use)
	}
	return attempt(c, ctx, full, req, undo)
}

// plain says whether a create is one of the protocol's plain create request (no
// container, TTL or data set instead, no test seam), which the client sends
// directly (see direct).
func (o createOptions) plain() bool {
	return !o.container && o.ttl == 0 && !o.orSetData && o.afterCreate == nil
}

// findProtected looks among parent's children for the node of protection id. An
// ephemeral node counts only if the current session owns it; one of an earlier
// session is deleted, since its session is dead or dying and it is nobody's.
func (c *Client) findProtected(ctx context.Context, parent, id string, ephemeral bool) (string, error) {
	return attempt(c, ctx, parent, func(conn *zk.Conn, parent string) (string, error) {
		names, _, err := conn.Children(parent)
		if errors.Is(err, zk.ErrNoNode) {
			return "", nil
		}
		if err != nil {
			return "", err
		}
		prefix := protectedName(id, "")
		for _, name := range names {
			if !strings.HasPrefix(name, prefix) {
				continue
			}
			p := joinPath(parent, name)
			if !ephemeral {
				return p, nil
			}
			ok, stat, err := conn.Exists(p)
			if err != nil {
				return "", err
			}
			if ok && stat.EphemeralOwner == conn.SessionID() {
				return p, nil
			}
			if ok {
				c.log.Info("zkrecipes: deleting a protected node of an earlier session", "path", p)
				c.deleteInBackground(p, -1)
			}
		}
		return "", nil
	}, nil)
}

func joinPath(parent, name string) string {
	if parent == "/" {
		return "/" + name
	}
	return parent + "/" + name
}
