package framework

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/framework/internal/wire"
)

// ErrDeleteInBackground is wrapped by a guaranteed Delete that could not finish now:
// the client goes on deleting in the background.
var ErrDeleteInBackground = errors.New("framework: delete continues in the background")

// backgroundPause is the pause between two tries of a background delete.
const backgroundPause = 200 * time.Millisecond

// DeleteOption sets how Delete works.
type DeleteOption func(*deleteOptions)

type deleteOptions struct{ guaranteed bool }

// Guaranteed keeps deleting in the background when the delete fails on a connection
// error or ctx ends: until it succeeds, the node is gone (its session ended), or the
// client closes (Close waits a second for pending deletes). Delete then returns an
// error wrapping ErrDeleteInBackground and the cause. Recipes use it so that a failed
// release never leaves a lock node behind.
func Guaranteed() DeleteOption { return func(o *deleteOptions) { o.guaranteed = true } }

// Delete removes a node if its version matches (-1 matches any).
func (c *Client) Delete(ctx context.Context, path string, version int32, opts ...DeleteOption) error {
	var o deleteOptions
	for _, opt := range opts {
		if opt == nil {
			return fmt.Errorf("%w: nil DeleteOption", ErrInvalidOption)
		}
		opt(&o)
	}
	full, err := c.fix(path, true)
	if err != nil {
		return err
	}
	if full == "/" {
		return fmt.Errorf("%w: cannot delete the root", ErrInvalidPath)
	}
	_, err = callDirect(c, ctx, opDelete, path, true, direct[struct{}]{
		send: func(t *wire.Conn, p string) <-chan wire.Reply { return t.Delete(p, version) },
		read: func(r wire.Reply) (struct{}, error) { return struct{}{}, r.Err() },
	}, func(conn *zk.Conn, p string) (struct{}, error) {
		return struct{}{}, conn.Delete(p, version)
	})
	if err != nil && o.guaranteed && (IsRetryable(err) || ctx.Err() != nil) && c.deleteInBackground(full, version) {
		return fmt.Errorf("%w: %w", ErrDeleteInBackground, err)
	}
	return err
}

// deleteInBackground deletes the server path p until done. It reports whether the
// delete was queued (not once the client is closing).
func (c *Client) deleteInBackground(p string, version int32) bool {
	return c.goBackground(func(ctx context.Context) { c.deleteUntilDone(ctx, p, version) })
}

// deleteUntilDone deletes the server path p, again after connection errors, until
// done or ctx ends (background work's ctx: until Close gives up on it).
func (c *Client) deleteUntilDone(ctx context.Context, p string, version int32) {
	c.untilDone(ctx, "delete "+p, func(conn *zk.Conn) error {
		err := conn.Delete(p, version)
		if errors.Is(err, zk.ErrNoNode) {
			return nil
		}
		return err
	})
}

// deleteProtectedInBackground finds and deletes the node of a protected create that
// failed, in case the server made it after all.
func (c *Client) deleteProtectedInBackground(parent, id string) {
	c.goBackground(func(ctx context.Context) { c.deleteProtectedUntilDone(ctx, parent, id) })
}

// deleteProtectedUntilDone finds the node of protection id among parent's children
// and deletes it, again after connection errors, until done or ctx ends.
func (c *Client) deleteProtectedUntilDone(ctx context.Context, parent, id string) {
	prefix := protectedName(id, "")
	c.untilDone(ctx, "clean up protected create "+prefix+" in "+parent, func(conn *zk.Conn) error {
		names, _, err := conn.Children(parent)
		if errors.Is(err, zk.ErrNoNode) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, name := range names {
			if strings.HasPrefix(name, prefix) {
				if err := conn.Delete(joinPath(parent, name), -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
					return err
				}
			}
		}
		return nil
	})
}

// untilDone repeats op while it fails on connection errors, until ctx ends.
func (c *Client) untilDone(ctx context.Context, what string, op func(*zk.Conn) error) {
	for {
		h, err := c.connection(ctx, true)
		if err == nil {
			_, err = use(h, "", func(conn *zk.Conn, _ string) (struct{}, error) { return struct{}{}, op(conn) })
		}
		switch {
		case err == nil:
			return
		case !IsRetryable(err):
			if ctx.Err() == nil {
				c.log.Warn("zkrecipes: background "+what+" failed", "error", err)
			}
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backgroundPause):
		}
	}
}
