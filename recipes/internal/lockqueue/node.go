package lockqueue

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/framework"
)

// cleanupTimeout bounds the delete of a node we give up; past it the client's
// guaranteed delete carries on in the background.
const cleanupTimeout = 5 * time.Second

// ErrNodeGone says our node vanished, or belongs to a session that is not ours any
// more: the participant starts again with a new node.
var ErrNodeGone = errors.New("lockqueue: our node is gone with its session")

// Node is a participant node we created.
type Node struct {
	Path    string // without the namespace
	Name    string // the last segment of Path
	Session int64  // the session that owns it
	Czxid   int64  // the zxid that created it; 0 until known
	seq     int64
}

// CreateNode makes our protected ephemeral-sequential node parent/name-<seq>, with
// container parents, and learns which session owns it. names are what sequence
// numbers follow in the parent's participants (name among them).
func CreateNode(ctx context.Context, c *framework.Client, parent, name string, names []string, data []byte) (*Node, error) {
	before := c.SessionID()
	p, err := c.Create(ctx, path.Join(parent, name), data,
		framework.Protected(), framework.Ephemeral(), framework.Sequential(), framework.CreatingParents())
	if err != nil {
		return nil, err
	}
	n := &Node{Path: p, Name: path.Base(p), Session: before}
	seq, _ := Sequence(n.Name, names)
	n.seq, _ = strconv.ParseInt(seq, 10, 64)
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
		n.Session, n.Czxid = stat.EphemeralOwner, stat.Czxid
	}
	return n, nil
}

// LearnCzxid takes our czxid from a listing of the parent when no child came or went
// since our create: the server numbered our node with the parent's child version
// before the create, and pzxid is the zxid of the last change of children.
func (n *Node) LearnCzxid(parent *zk.Stat) {
	if n.Czxid == 0 && parent != nil && int64(parent.Cversion) == n.seq+1 {
		n.Czxid = parent.Pzxid
	}
}

// Confirm reads what LearnCzxid could not, and checks that the node is still ours.
func (n *Node) Confirm(ctx context.Context, c *framework.Client) error {
	if n.Czxid != 0 {
		return nil
	}
	ok, stat, err := c.Exists(ctx, n.Path)
	switch {
	case err != nil:
		return err
	case !ok || stat.EphemeralOwner != n.Session:
		return ErrNodeGone
	}
	n.Czxid = stat.Czxid
	return nil
}

// Delete removes the node with a context of its own, since ctx may be the one whose
// end made us give up; a delete that cannot finish now goes on in the background.
func (n *Node) Delete(ctx context.Context, c *framework.Client) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	err := c.Delete(ctx, n.Path, -1, framework.Guaranteed())
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		c.Logger().Warn("zkrecipes: deleting a lock node", "node", n.Path, "error", err)
	}
	return err
}

func (n *Node) String() string { return fmt.Sprintf("%s (session %#x)", n.Path, n.Session) }
