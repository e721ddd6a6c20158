package framework

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/framework/internal/wire"
)

// Retry runs op until it succeeds, fails with an error that IsRetryable does not
// accept, or the retry policy gives up; between attempts it sleeps as the policy
// says. Until the client first has a session, op is not retried (see
// WithRetryBeforeFirstConnection). It returns promptly when ctx is done (an error
// wrapping ctx.Err()) or the client closes (ErrClosed). Node operations of the Client already retry; do not
// call them inside Retry, or retries multiply. A nil op is an error wrapping
// ErrInvalidOption. A ctx that has ended already runs op not once: Retry returns
// ctx's error (wrapped), as the standard library's calls do.
func (c *Client) Retry(ctx context.Context, op func(ctx context.Context) error) error {
	if op == nil {
		return invalidOption("nil operation to retry")
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("framework: %w", err)
	}
	return c.retry(ctx, opOther, op)
}

// retry is Retry, counting its retries as those of the operation named name.
func (c *Client) retry(ctx context.Context, name string, op func(ctx context.Context) error) (err error) {
	// A wait for a connection that ends the operation says how long the operation
	// waited in all, not only its last wait: after retries, that is what the caller saw.
	start := time.Now()
	defer func() {
		if err == nil {
			return // ce below would be made on the heap for every call
		}
		if ce := (*ConnectError)(nil); errors.As(err, &ce) {
			ce.Waited = time.Since(start)
		}
	}()
	var b backoff.BackOff
	for {
		if c.closing.Err() != nil {
			return ErrClosed
		}
		err := op(ctx)
		switch {
		case err == nil:
			return nil
		case !IsRetryable(err): // a definitive answer, even if ctx ended meanwhile
			return err
		case c.closing.Err() != nil:
			return ErrClosed
		case ctx.Err() != nil:
			return wrapCtx(ctx, err)
		case c.neverConnected():
			return err
		}
		if b == nil {
			b = c.opts.retry.NewBackOff()
		}
		pause := b.NextBackOff()
		if pause == backoff.Stop {
			return err
		}
		c.log.Debug("zkrecipes: retrying", "error", err, "after", pause)
		c.metrics.retry(ctx, name)
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return wrapCtx(ctx, err)
		case <-c.closing.Done():
			t.Stop()
			return ErrClosed
		}
	}
}

func wrapCtx(ctx context.Context, last error) error {
	if errors.Is(last, ctx.Err()) {
		return last
	}
	if ce := (*ConnectError)(nil); errors.As(last, &ce) { // still waiting for a connection
		return &ConnectError{Err: ctx.Err(), Last: ce.Last}
	}
	return fmt.Errorf("framework: %w (last error: %v)", ctx.Err(), last)
}

// neverConnected says whether an operation's failed wait for a connection is final:
// the client has never reached a server, which is most often a wrong address or an
// ensemble that is down, and retrying would hide that for minutes.
func (c *Client) neverConnected() bool {
	return !c.opts.retryFirst && c.State() == Latent
}

// connection waits, at most the connection timeout, until the client has a session,
// and returns the connection to send a request on; a wait that ends without one is a
// *ConnectError. Background work (internal) goes on while Close waits for it; user
// requests stop as soon as Close begins. Nothing is sent for a context that has
// already ended.
func (c *Client) connection(ctx context.Context, internal bool) (*handle, error) {
	start := time.Now()
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		c.mu.Lock()
		state, ch, h := c.link.session.state, c.link.connected, c.link.h
		c.mu.Unlock()
		switch {
		case !internal && c.closing.Err() != nil:
			return nil, ErrClosed
		case state.IsConnected() && ctx.Err() != nil:
			return nil, ctx.Err()
		case state.IsConnected():
			return h, nil
		}
		if timer == nil {
			timer = time.NewTimer(c.opts.connectionTimeout)
		}
		stop := c.closing.Done()
		if internal {
			stop = c.abandoned.Done()
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, c.noConnection(ctx.Err(), start)
		case <-stop:
			return nil, ErrClosed
		case <-timer.C:
			return nil, c.noConnection(c.connectionTimedOut(), start)
		}
	}
}

// connectionTimedOut is what ends a wait for a connection that lasted the whole
// connection timeout.
func (c *Client) connectionTimedOut() error {
	return fmt.Errorf("connection timeout %v: %w", c.opts.connectionTimeout, zk.ErrNoServer)
}

// request is one request to send on a connection, on the server path p: a call's
// path is handed to it rather than captured, so that the read requests of call
// capture nothing and cost no allocation when they run on the caller's goroutine.
type request[T any] func(conn *zk.Conn, p string) (T, error)

// attempt sends one request, req on the server path p, once connected. A request cannot be taken back once
// sent, and go-zookeeper takes no context, so when ctx ends first the request is
// left to finish on its own (go-zookeeper bounds it by its receive timeout). undo,
// if given, is for a request that may make nodes: it is handed the request's outcome
// and deletes what the request made, and attempt waits for both (see cleanUp) before
// it returns ctx's error, so that nothing the call made is left when it returns.
func attempt[T any](c *Client, ctx context.Context, p string, req request[T], undo func(ctx context.Context, v T, err error)) (T, error) {
	var zero T
	h, err := c.connection(ctx, false)
	if err != nil {
		return zero, err
	}
	if c.namespace != "" && !c.namespaceReady.Load() {
		req = inNamespace(c, req)
	}
	if ctx.Done() == nil {
		v, err := use(h, p, req)
		return v, c.closedErr(err)
	}
	type result struct {
		v   T
		err error
	}
	res := make(chan result, 1)
	if !c.goRequest(func() {
		v, err := use(h, p, req)
		res <- result{v, err}
	}) {
		return zero, ErrClosed
	}
	select {
	case r := <-res:
		return r.v, c.closedErr(r.err)
	case <-ctx.Done():
		if undo != nil {
			c.cleanUp(func(ctx context.Context) {
				r := <-res
				undo(ctx, r.v, r.err)
			})
		}
		return zero, ctx.Err()
	}
}

// cleanupTimeout bounds how long a call whose ctx ended waits to undo what it may
// have made (a create's node): for its request's answer, and for the delete. Past
// it, the undoing goes on in the background. As the recipes' own bound on undoing
// a failed attempt (recipes/internal/attempt).
const cleanupTimeout = 5 * time.Second

// cleanUp runs undo, which deletes what a call that gave up may have made, as
// background work (Close waits for it, up to closeWait, and then ends undo's
// context), and waits for it to end: at most cleanupTimeout, and not once Close
// begins. What undo has not finished by then goes on in the background.
func (c *Client) cleanUp(undo func(ctx context.Context)) {
	done := make(chan struct{})
	if !c.goBackground(func(ctx context.Context) {
		defer close(done)
		undo(ctx)
	}) {
		return // Close has begun: no work starts (an ephemeral node goes with the session)
	}
	t := time.NewTimer(cleanupTimeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		c.log.Debug("zkrecipes: undoing a cancelled call goes on in the background")
	case <-c.closing.Done():
	}
}

// closedErr turns the errors go-zookeeper gives requests cut short by our own Close
// into ErrClosed; the same errors from a dropped connection stay retryable.
func (c *Client) closedErr(err error) error {
	if err != nil && (errors.Is(err, zk.ErrClosing) || errors.Is(err, zk.ErrConnectionClosed)) && c.closing.Err() != nil {
		return ErrClosed
	}
	return err
}

// inNamespace makes req create the namespace node first, on the client's first use.
// It is persistent, unlike the container parents of recipes: a container namespace
// would vanish when empty and make later creates under it fail.
func inNamespace[T any](c *Client, req request[T]) request[T] {
	return func(conn *zk.Conn, p string) (T, error) {
		if err := c.mkdirs(conn, "/"+c.namespace, false); err != nil {
			var zero T
			return zero, err
		}
		c.namespaceReady.Store(true)
		return req(conn, p)
	}
}

// mkdirs creates p and any missing parents, with the ACL provider's ACLs: containers
// when asked, persistent nodes otherwise. It walks up only as far as nodes are
// missing, so an existing parent costs one request.
func (c *Client) mkdirs(conn *zk.Conn, p string, containers bool) error {
	if p == "/" {
		return nil
	}
	create := func() error {
		var err error
		if containers && p != "/"+c.namespace {
			_, err = conn.CreateContainer(p, nil, zk.FlagContainer, c.aclFor(p))
		} else {
			_, err = conn.Create(p, nil, zk.FlagPersistent, c.aclFor(p))
		}
		if errors.Is(err, zk.ErrNodeExists) {
			return nil
		}
		return err
	}
	err := create()
	if errors.Is(err, zk.ErrNoNode) {
		if err := c.mkdirs(conn, parentPath(p), containers); err != nil {
			return err
		}
		err = create()
	}
	return err
}

func (c *Client) aclFor(serverPath string) []zk.ACL {
	if acl := c.opts.acl.ACLForPath(serverPath); len(acl) > 0 {
		return acl
	}
	return c.opts.acl.DefaultACL()
}

// fix turns a user's path into the server's, checking it first.
func (c *Client) fix(p string, write bool) (string, error) {
	if err := c.view.usable(); err != nil {
		return "", err
	}
	if err := ValidatePath(p); err != nil {
		return "", err
	}
	full := joinNamespace(c.namespace, p)
	if write {
		if err := validateWritePath(full); err != nil {
			return "", err
		}
	}
	return full, nil
}

func (c *Client) unfix(serverPath string) string {
	return stripNamespace(c.namespace, serverPath)
}

// call runs the operation op, req on the server path of p, retried, with errors that
// name p.
func call[T any](c *Client, ctx context.Context, op string, p string, write bool, req request[T]) (T, error) {
	return callDirect(c, ctx, op, p, write, direct[T]{}, req)
}

// callDirect is call, with the request sent directly (d) if it can be (see direct);
// a zero d is go-zookeeper's req.
func callDirect[T any](c *Client, ctx context.Context, op string, p string, write bool, d direct[T], req request[T]) (T, error) {
	var v, zero T
	full, err := c.fix(p, write)
	if err != nil {
		return zero, err
	}
	start := c.metrics.start()
	err = c.retry(ctx, op, func(ctx context.Context) error {
		var err error
		if d.send != nil {
			v, err = attemptDirect(c, ctx, full, d, req, nil)
		} else {
			v, err = attempt(c, ctx, full, req, nil)
		}
		return err
	})
	c.metrics.request(ctx, op, start, err)
	if err != nil {
		return zero, fmt.Errorf("framework: %s: %w", p, c.explain(err))
	}
	return v, nil
}

// ErrAuthRequired is the error of a request that a server refused because the
// session has not authenticated as the server requires (ZooKeeper's error -124,
// from a server with sessionRequireClientSASLAuth or enforce.auth.*).
var ErrAuthRequired = errors.New("framework: the server requires authentication: give the client credentials (WithAuth) or a SASL login (WithSASL)")

// sessionRequiresAuth is go-zookeeper's text for ZooKeeper's -124.
const sessionRequiresAuth = "unknown error: -124"

// explain says that an error is an ACL's refusal, and which credentials were
// refused: go-zookeeper's own words, "not authenticated", read as if the client had
// sent none. Only the schemes are named, never the credentials.
func (c *Client) explain(err error) error {
	if err.Error() == sessionRequiresAuth { // go-zookeeper has no value for it
		return fmt.Errorf("%w (%w)", ErrAuthRequired, err)
	}
	if !errors.Is(err, zk.ErrNoAuth) {
		return err
	}
	creds := "none"
	if len(c.opts.auth) > 0 {
		schemes := make([]string, len(c.opts.auth))
		for i, a := range c.opts.auth {
			schemes[i] = a.scheme
		}
		creds = strings.Join(schemes, ", ")
	}
	return fmt.Errorf("refused by an ACL (client credentials: %s): %w", creds, err)
}

type getResult struct {
	data  []byte
	stat  *zk.Stat
	watch <-chan zk.Event
	ok    bool
}

// Get reads a node's data and stat.
func (c *Client) Get(ctx context.Context, path string) ([]byte, *Stat, error) {
	r, err := callDirect(c, ctx, opGet, path, false, direct[getResult]{
		send: (*wire.Conn).Get,
		read: func(r wire.Reply) (getResult, error) {
			data, stat, err := r.DataReply()
			return getResult{data: data, stat: stat}, err
		},
	}, func(conn *zk.Conn, p string) (getResult, error) {
		data, stat, err := conn.Get(p)
		return getResult{data: data, stat: stat}, err
	})
	return r.data, r.stat, err
}

// GetW reads a node's data and leaves a watch on it, which fires once on its next
// change or deletion, or with EventNotWatching when the session ends. Event paths are
// the server's, namespace included. No watch is left when the node does not exist.
func (c *Client) GetW(ctx context.Context, path string) ([]byte, *Stat, <-chan Event, error) {
	r, err := call(c, ctx, opGetW, path, false, func(conn *zk.Conn, p string) (getResult, error) {
		data, stat, w, err := conn.GetW(p)
		return getResult{data: data, stat: stat, watch: w}, err
	})
	return r.data, r.stat, r.watch, err
}

// Exists reports whether a node exists, with its stat when it does.
func (c *Client) Exists(ctx context.Context, path string) (bool, *Stat, error) {
	r, err := callDirect(c, ctx, opExists, path, false, direct[getResult]{
		send: (*wire.Conn).Exists,
		read: func(r wire.Reply) (getResult, error) {
			stat, err := r.StatReply()
			if errors.Is(err, zk.ErrNoNode) {
				return getResult{}, nil // as go-zookeeper's Exists
			}
			return getResult{ok: err == nil, stat: stat}, err
		},
	}, func(conn *zk.Conn, p string) (getResult, error) {
		ok, stat, err := conn.Exists(p)
		if !ok {
			stat = nil // go-zookeeper's is empty: no stat for no node, on either path
		}
		return getResult{ok: ok, stat: stat}, err
	})
	return r.ok, r.stat, err
}

// ExistsW is Exists leaving a watch that fires on the node's creation, change or
// deletion.
func (c *Client) ExistsW(ctx context.Context, path string) (bool, *Stat, <-chan Event, error) {
	r, err := call(c, ctx, opExistsW, path, false, func(conn *zk.Conn, p string) (getResult, error) {
		ok, stat, w, err := conn.ExistsW(p)
		return getResult{ok: ok, stat: stat, watch: w}, err
	})
	return r.ok, r.stat, r.watch, err
}

type childrenResult struct {
	names []string
	stat  *zk.Stat
	watch <-chan zk.Event
}

// Children lists the names of a node's children, in no particular order.
func (c *Client) Children(ctx context.Context, path string) ([]string, *Stat, error) {
	r, err := callDirect(c, ctx, opChildren, path, false, direct[childrenResult]{
		send: (*wire.Conn).Children,
		read: func(r wire.Reply) (childrenResult, error) {
			names, stat, err := r.ChildrenReply()
			return childrenResult{names: names, stat: stat}, err
		},
	}, func(conn *zk.Conn, p string) (childrenResult, error) {
		names, stat, err := conn.Children(p)
		return childrenResult{names: names, stat: stat}, err
	})
	return r.names, r.stat, err
}

// ChildrenW is Children leaving a watch that fires when a child is added or removed.
func (c *Client) ChildrenW(ctx context.Context, path string) ([]string, *Stat, <-chan Event, error) {
	r, err := call(c, ctx, opChildrenW, path, false, func(conn *zk.Conn, p string) (childrenResult, error) {
		names, stat, w, err := conn.ChildrenW(p)
		return childrenResult{names, stat, w}, err
	})
	return r.names, r.stat, r.watch, err
}

// Set writes a node's data if its version matches (-1 matches any).
func (c *Client) Set(ctx context.Context, path string, data []byte, version int32) (*Stat, error) {
	if err := c.checkData(path, false, data); err != nil {
		return nil, err
	}
	return callDirect(c, ctx, opSet, path, true, direct[*zk.Stat]{
		send: func(t *wire.Conn, p string) <-chan wire.Reply { return t.Set(p, data, version) },
		read: wire.Reply.StatReply,
	}, func(conn *zk.Conn, p string) (*zk.Stat, error) {
		return conn.Set(p, data, version)
	})
}
