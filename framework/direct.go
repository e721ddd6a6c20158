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
// d, or req, the same request as go-zookeeper's, while the namespace's node is still
// to be made on the client's first use (inNamespace), and where the connection layer
// cannot record a reply's zxid as go-zookeeper's (wire.Handle.Direct).
func attemptDirect[T any](c *Client, ctx context.Context, p string, d direct[T], req request[T], undo func(ctx context.Context, v T, err error)) (T, error) {
	var zero T
	h, err := c.connection(ctx, false)
	if err != nil {
		return zero, err
	}
	t := h.net.Load()
	if t == nil || !h.wire.Direct() || c.namespace != "" && !c.namespaceReady.Load() {
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
				r, ok := <-ch // the connection's end closes it
				v, err := d.decode(r, ok)
				undo(ctx, v, err)
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
	return d.read(r)
}
