package framework

import (
	"context"

	"github.com/go-zookeeper/zk"
)

// Sync waits until the server this client reads from has caught up with the
// ensemble's leader as of the call, for path's part of the tree: a read after it
// reflects every write committed before Sync was called, even one made through
// another client. (ZooKeeper's reads are served by the connected server, which may
// lag the leader; within one session they never go back in time.) Retried on
// connection errors like every operation; a ctx that ends first returns its error,
// and the sync, if sent, completes on its own.
func (c *Client) Sync(ctx context.Context, path string) error {
	_, err := call(c, ctx, path, false, func(conn *zk.Conn, p string) (string, error) {
		return conn.Sync(p)
	})
	return err
}
