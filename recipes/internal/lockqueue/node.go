package lockqueue

import (
	"context"
	"errors"
	"fmt"
	"path"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/internal/attempt"
)

// ErrNodeGone says our node vanished, or belongs to a session that is not ours any
// more: the participant starts again with a new node.
var ErrNodeGone = errors.New("lockqueue: our node is gone with its session")

// Node is a participant node we created. A queued waiter keeps its own, so it holds
// no more than it must: its name is read off its path (a field of its own made it 48
// bytes instead of 24).
type Node struct {
	Path    string // without the namespace
	Session int64  // the session that owns it
	// Czxid is its czxid as the create's reply told it, 0 if it did not (a reply
	// lost, the node found by its protection id): a hold's fencing token, which the
	// grant then need not read.
	Czxid int64
	// AnyoneReads says that its ACL lets anyone read it, as the create told: only
	// then is its watch set with no read (Tracker.armWith).
	AnyoneReads bool
}

// Name is the last segment of the node's path.
func (n *Node) Name() string { return path.Base(n.Path) }

// createNode makes our protected ephemeral node p; trace, if not nil, is the
// create's (framework.Plumbing.Traced), for a caller that sends a request after it.
func createNode(ctx context.Context, c *framework.Client, p string, data []byte, trace *framework.CreateTrace, extra ...framework.CreateOption) (*Node, error) {
	before := c.SessionID()
	if trace == nil {
		trace = new(framework.CreateTrace)
	}
	opts := make([]framework.CreateOption, 0, 5) // on the stack, for one extra
	opts = append(opts, framework.Protected(), framework.Ephemeral(), framework.CreatingParentContainers(), c.ForRecipes().Traced(trace))
	opts = append(opts, extra...)
	p, err := c.Create(ctx, p, data, opts...)
	if err != nil {
		return nil, err
	}
	n := &Node{Path: p, Session: before, Czxid: trace.Czxid(), AnyoneReads: trace.AnyoneReads()}
	if after := c.SessionID(); before == 0 || after != before {
		// The session changed around the create: ask the server whose node it is.
		ok, stat, err := c.Exists(ctx, p)
		switch {
		case err != nil:
			n.Delete(ctx, c)
			return nil, err
		case !ok:
			return nil, ErrNodeGone
		}
		n.Session = stat.EphemeralOwner
	}
	return n, nil
}

// Delete removes the node with a context of its own, since ctx may be the one whose
// end made us give up; a delete that cannot finish now goes on in the background.
func (n *Node) Delete(ctx context.Context, c *framework.Client) error {
	ctx, cancel := attempt.CleanupContext(ctx)
	defer cancel()
	err := c.Delete(ctx, n.Path, -1, framework.Guaranteed())
	if err != nil && !errors.Is(err, framework.ErrNoNode) {
		c.ForRecipes().Logger().Warn("zkrecipes: deleting a lock node", "node", n.Path, "error", err)
	}
	return err
}

func (n *Node) String() string { return fmt.Sprintf("%s (session %#x)", n.Path, n.Session) }
