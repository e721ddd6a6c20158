package framework

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
)

// deleteAllRounds bounds how often DeleteAll lists and deletes one node's children
// again because a child appeared after the listing.
const deleteAllRounds = 5

// DeleteAll deletes a node and everything under it, depth first (Curator's
// deletingChildrenIfNeeded), never the root ("/", the namespace node under a
// namespace); a node already gone is no error, whoever deleted it,
// and the node itself missing is success. A child created under a node between its
// listing and its delete makes DeleteAll list that node again, up to five times;
// a creator that keeps adding children faster than that leaves DeleteAll failing
// with an error wrapping zk.ErrNotEmpty, the tree partly deleted. When ctx ends, the
// nodes already deleted stay deleted and the rest stay; no request is sent after
// that. Connection errors are retried as the retry policy says, from the top.
func (c *Client) DeleteAll(ctx context.Context, path string) error {
	return c.deleteAll(ctx, path, nil)
}

// deleteAll is DeleteAll; listed, a test seam, runs after each listing of a node's
// children, given its server path.
func (c *Client) deleteAll(ctx context.Context, path string, listed func(string)) error {
	full, err := c.fix(path, true)
	if err != nil {
		return err
	}
	if path == "/" { // under a namespace, the namespace node, which the client makes only once
		return fmt.Errorf("%w: cannot delete the root", ErrInvalidPath)
	}
	start := c.metrics.start()
	err = c.retry(ctx, opDeleteAll, func(ctx context.Context) error { return c.deleteTree(ctx, full, listed) })
	c.metrics.request(ctx, opDeleteAll, start, err)
	if err != nil {
		return fmt.Errorf("framework: delete all %s: %w", path, c.explain(err))
	}
	return nil
}

// deleteTree deletes the server path p and its subtree, one request at a time.
func (c *Client) deleteTree(ctx context.Context, p string, listed func(string)) error {
	for round := 1; ; round++ {
		names, err := attempt(c, ctx, p, func(conn *zk.Conn, p string) ([]string, error) {
			names, _, err := conn.Children(p)
			return names, err
		}, nil)
		if errors.Is(err, zk.ErrNoNode) {
			return nil
		}
		if err != nil {
			return err
		}
		if listed != nil {
			listed(p)
		}
		for _, name := range names {
			if err := c.deleteTree(ctx, joinPath(p, name), listed); err != nil {
				return err
			}
		}
		_, err = attempt(c, ctx, p, func(conn *zk.Conn, p string) (struct{}, error) { return struct{}{}, conn.Delete(p, -1) }, nil)
		switch {
		case err == nil || errors.Is(err, zk.ErrNoNode):
			return nil
		case errors.Is(err, zk.ErrNotEmpty) && round < deleteAllRounds:
			continue
		case errors.Is(err, zk.ErrNotEmpty):
			return fmt.Errorf("%s still has children after %d rounds of deletes (a concurrent creator): %w", c.unfix(p), round, err)
		}
		return err
	}
}
