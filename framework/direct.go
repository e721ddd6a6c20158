package framework

import (
	"context"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/framework/internal/wire"
)

// direct is a request the client writes and reads itself, through the connection
// layer (wire's calls), rather than go-zookeeper's call: it is written on the
// caller's goroutine and its reply decoded field by field, where go-zookeeper's call
// blocks without a context, so that a caller that may give up waits for it on a
// goroutine of ours, and decodes its reply by reflection. The node operations that
// set no watch go so: a lock's create, listing and delete, a counter's read and set.
//
// send writes the request for the server path p on t; read decodes its reply.
type direct[T any] struct {
	send func(t *wire.Conn, p string) <-chan wire.Reply
	read func(r wire.Reply) (T, error)
}

// attemptDirect is attempt (see it, for ctx and undo) for a request sent directly:
// d, or req, the same request as go-zookeeper's: while the namespace's node is still
// to be made on the client's first use (inNamespace), where the connection layer
// cannot record a reply's zxid as go-zookeeper's (wire.Handle.Direct), and on a
// connection that is not open.
func attemptDirect[T any](c *Client, ctx context.Context, p string, d direct[T], req request[T], undo func(ctx context.Context, v T, err error)) (T, error) {
	var zero T
	h, err := c.connection(ctx, false)
	if err != nil {
		return zero, err
	}
	t := h.net.Load()
	if t == nil || !t.Open() || !h.wire.Direct() || c.namespace != "" && !c.namespaceReady.Load() {
		// A connection ended, or not yet answered, while the client's state still says
		// Connected: go-zookeeper's request waits for the next one, as it always did.
		return attempt(c, ctx, p, req, undo)
	}
	if !h.enter() {
		return zero, c.closedErr(zk.ErrConnectionClosed)
	}
	defer h.users.Done()
	ch := d.send(t, p)
	select {
	case r, ok := <-ch:
		v, err := d.decode(r, ok)
		return v, c.closedErr(err)
	case <-ctx.Done():
		if undo != nil {
			c.cleanUp(func(ctx context.Context) {
				select {
				case r, ok := <-ch: // the connection's end closes it
					v, err := d.decode(r, ok)
					undo(ctx, v, err)
				case <-ctx.Done(): // Close gave up on background work
				}
			})
		}
		return zero, ctx.Err()
	}
}

// decode reads the reply r, or, if the connection ended before it (!ok), says so.
func (d direct[T]) decode(r wire.Reply, ok bool) (T, error) {
	if !ok {
		var zero T
		return zero, wire.ErrConnectionLost
	}
	defer r.Done() // read copies what it keeps
	return d.read(r)
}

// WatchData sets a watch on the data of the node at path (c's path: c may be a
// namespaced view), as GetW does, but for the client's current connection only,
// with a request the client writes and reads itself (see direct): no goroutine of
// ours waits for it, and no reflection decodes its reply. Its channel hears the
// node's next change of data or its deletion, or closes without an event when the
// connection ends first: the caller must read again after any loss of connection,
// as a lock's waiter does on every change of the client's state. A node that does
// not exist is ErrNoNode, with no watch left. Where the client cannot write its own
// requests (a namespace's first use), the watch is GetW's, which lasts the session.
func (p Plumbing) WatchData(ctx context.Context, c *Client, path string) (<-chan Event, error) {
	var watch <-chan zk.Event
	r, err := callDirect(c, ctx, opGetW, path, false, direct[getResult]{
		send: func(t *wire.Conn, p string) <-chan wire.Reply {
			reply, w := t.GetW(p)
			watch = w
			return reply
		},
		read: func(r wire.Reply) (getResult, error) {
			_, _, err := r.DataReply()
			return getResult{}, err
		},
	}, func(conn *zk.Conn, p string) (getResult, error) {
		_, _, w, err := conn.GetW(p)
		return getResult{watch: w}, err
	})
	if err != nil {
		return nil, err
	}
	if r.watch != nil {
		return r.watch, nil
	}
	return watch, nil
}

// WatchDataSince is WatchData on the node at path together with, in the same write, a
// watch on the data of the node at own that lasts the session, as GetW's does, set
// with no read, as of zxid since (ZooKeeper's setWatches): a lock's waiter watches
// the node ahead and, with it, its own node, which it must watch once it holds. A
// change of own's data after since, or own gone, notifies at once, so the caller must
// know own as of since (its czxid, for a node the caller made and never changed).
// own's notifications reach the client's OnWatchEvent subscribers, and no channel;
// its watch is set again on every new connection of the session, as of the last zxid
// the client read, as go-zookeeper sets its own. The server checks no ACL for such a
// watch, and one from 3.9.2 on delivers a node's notifications only to a session
// that may read it: own must be a node anyone may read (CreateTrace.AnyoneReads).
// path's watch is WatchData's, a read, refused as WatchData's is (ErrNoNode for a
// node gone, ErrNoAuth for one we may not read), unless path's name is protected
// with an id that says anyone may read the node (a lock's participant's, made by
// this module with an ACL that lets anyone read it): then it is set in the
// setWatches too, with no read, and a node gone, or changed since since, notifies
// at once on the channel rather than failing. A node ahead of own in a lock's
// queue was made before own, so that own's czxid is such a zxid, unless it was
// written since (a revocation request) or made since (a read/write lock's
// downgrade, a wrapped sequence), which wakes its waiter once for nothing, and
// everything of the client's that listens on that path. path may be "": then own's watch is set alone, and the channel is nil.
//
// ownSet reports whether own's watch was set, whatever path's error: not where the
// client cannot write its own requests (see WatchData), where path's watch is
// WatchData's alone, and the caller must watch own some other way (GetW).
func (p Plumbing) WatchDataSince(ctx context.Context, c *Client, since int64, path, own string) (_ <-chan Event, ownSet bool, err error) {
	if path == "" {
		ownSet, err = c.watchLasting(ctx, since, own)
		return nil, ownSet, err
	}
	ownFull, err := c.fix(own, false)
	if err != nil {
		return nil, false, err
	}
	// go-zookeeper's request (fallback) runs on a goroutine that may outlive the
	// call: its watch comes back as the result; the direct ones' are set on this
	// goroutine (send, then read).
	type result struct {
		watch    <-chan zk.Event
		fallback bool
	}
	var watch <-chan zk.Event
	var set <-chan wire.Reply
	noRead := saysAnyoneReads(baseName(path))
	r, err := callDirect(c, ctx, opGetW, path, false, direct[result]{
		send: func(t *wire.Conn, full string) <-chan wire.Reply {
			ownSet = false
			if noRead {
				var both <-chan wire.Reply
				both, watch = t.WatchAndSetWatches(full, since, ownFull)
				return both
			}
			var got <-chan wire.Reply
			got, watch, set = t.GetWAndSetWatches(full, since, ownFull)
			return got
		},
		read: func(r wire.Reply) (result, error) {
			if noRead {
				err := r.Err()
				ownSet = err == nil
				return result{}, err
			}
			// own's answer comes right after path's, or the connection's end: its
			// watch lasts the session, and the next connection sets it again, so only
			// a refusal leaves it unset. A cut after path's answer fails nothing.
			if s, ok := <-set; !ok || s.Code == 0 {
				ownSet = true
			}
			_, _, err := r.DataReply()
			return result{}, err
		},
	}, func(conn *zk.Conn, full string) (result, error) {
		_, _, w, err := conn.GetW(full)
		return result{watch: w, fallback: true}, err
	})
	switch {
	case err != nil:
		return nil, ownSet, err
	case r.fallback:
		return r.watch, ownSet, nil
	}
	return watch, ownSet, nil
}

// watchLasting is WatchDataSince with no path: own's watch alone.
func (c *Client) watchLasting(ctx context.Context, since int64, own string) (set bool, err error) {
	_, err = callDirect(c, ctx, opGetW, own, false, direct[struct{}]{
		send: func(t *wire.Conn, full string) <-chan wire.Reply {
			set = false
			return t.SetWatches(since, full)
		},
		read: func(r wire.Reply) (struct{}, error) {
			err := r.Err()
			set = err == nil
			return struct{}{}, err
		},
	}, func(*zk.Conn, string) (struct{}, error) {
		return struct{}{}, nil // go-zookeeper has no setWatches: the caller watches own its own way
	})
	return set, err
}
