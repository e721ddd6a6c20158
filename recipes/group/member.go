package group

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"sync"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/cache"
	"github.com/zkrecipes/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/zkrecipes/recipes/internal/attempt"
	"github.com/zkrecipes/zkrecipes/recipes/internal/lifecycle"
	"github.com/zkrecipes/zkrecipes/recipes/nodes"
)

var (
	// ErrDuplicateID is returned by Start when another live session is a member
	// under the same id.
	ErrDuplicateID = errors.New("group: the id is taken by another member")
	// ErrStarted is returned by a second Start; ErrClosed after Close. (A closed
	// client's errors wrap framework.ErrClosed instead.)
	ErrStarted, ErrClosed = lifecycle.Errors("group")
	// ErrInvalid is wrapped by the errors for bad arguments.
	ErrInvalid = errors.New("group: invalid argument")
	// ErrFixedPayload is returned by SetPayload on a member made with FixedPayload.
	ErrFixedPayload = errors.New("group: the payload is fixed")
)

// Option configures a Member.
type Option func(*options) error

type options struct{ fixed bool }

// FixedPayload promises that this member's payload never changes, so that on
// one-shot watches (a server before 3.6, or framework.WithOneShotWatches) the other
// members need no data watch on its node: a group of M such members holds about 2
// server watches per member instead of M + 1. On a persistent watch, which sets no
// data watches, it saves nothing and costs nothing. The node is made with the client's
// ACL for its path cut to READ (nodes.ReadOnly), at every create: ZooKeeper then
// refuses every change of its data and its ACL, by anyone, while its owner can still
// delete it; SetPayload returns ErrFixedPayload without sending anything. The
// member's own view reads each other member's ACL once (cache.TrustReadOnly) and
// follows read-only nodes without a data watch. Other members, Curator's included,
// need only READ on the node, and go on as before. Default off: the payload may
// change.
func FixedPayload() Option {
	return func(o *options) error {
		o.fixed = true
		return nil
	}
}

// Member is this process's membership of the group at a path, and its view of the
// others.
type Member struct {
	path, id string
	fixed    bool // FixedPayload
	node     *nodes.PersistentNode
	members  *cache.Cache
	tel      *telemetry

	state lifecycle.Lifecycle

	mu      sync.Mutex
	payload []byte
	done    chan struct{} // closed when the member stops following the group
	err     error         // why it stopped
}

// New makes a member of the group at path with id, which must be unique in the
// group and a valid node name, and payload as its data; opts may add FixedPayload.
// Nothing is sent to ZooKeeper until Start.
func New(c *framework.Client, path, id string, payload []byte, opts ...Option) (*Member, error) {
	if err := args.Check(c, path); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := args.CheckName(id); err != nil {
		return nil, fmt.Errorf("%w: id: %w", ErrInvalid, err)
	}
	var o options
	if err := args.Apply(&o, opts); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	nodeOpts, cacheOpts := []nodes.Option{nodes.Ephemeral()}, []cache.Option{cache.Depth(1)}
	if o.fixed {
		nodeOpts = append(nodeOpts, nodes.ReadOnly())
		cacheOpts = append(cacheOpts, cache.TrustReadOnly())
	}
	node, err := nodes.New(c, nodePath(path, id), payload, nodeOpts...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	members, err := cache.New(c, path, cacheOpts...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	m := &Member{path: path, id: id, fixed: o.fixed, node: node, members: members, payload: bytes.Clone(payload), tel: newTelemetry(c), done: make(chan struct{})}
	if m.tel != nil {
		members.Listen(m.tel.heard(path))
	}
	members.Listen(func(e cache.Event) {
		if e.Type == cache.Stopped {
			m.stop(fmt.Errorf("group: %s: %w", m.path, e.Err))
		}
	})
	return m, nil
}

func nodePath(p, id string) string { return path.Join(p, id) }

// Start joins the group and loads the member list; it returns once both are done,
// or when ctx ends (an error wrapping ctx's, and nothing left on the server). A
// live member of another session under our id makes it fail with ErrDuplicateID.
// From then on our node is kept in place through faults, and the list follows the
// group, until Close. Started before its client's first session, Start waits for
// one as the client's operations do: one connection timeout at most, unless the
// client was made WithRetryBeforeFirstConnection; when none comes in time, it
// returns an error wrapping the client's *framework.ConnectError (and
// framework.ErrNoServer), having sent nothing. A failed Start closes the Member:
// make a new one to try again.
func (m *Member) Start(ctx context.Context) error {
	if err := m.state.Start(ErrStarted, ErrClosed); err != nil {
		return err
	}

	err := m.node.Start(ctx)
	if errors.Is(err, nodes.ErrNodeExists) {
		err = fmt.Errorf("%w: %q in %s: %w", ErrDuplicateID, m.id, m.path, err)
	}
	if err == nil {
		err = m.members.Start(ctx)
	}
	if err != nil {
		// Our node may be in place already: delete it with a context of its own, since
		// ctx may be the one that ended.
		cleanup, cancel := attempt.CleanupContext(ctx)
		_ = m.Close(cleanup)
		cancel()
		return fmt.Errorf("group: joining %s: %w", m.path, err)
	}
	return nil
}

// Members is the group as this member sees it: id -> payload, ourselves always
// included. After a join, a leave or a session loss it is right again within the
// session timeout and a second.
func (m *Member) Members() map[string][]byte {
	members := map[string][]byte{}
	for _, id := range m.members.Children(m.path) {
		if n, ok := m.members.Get(nodePath(m.path, id)); ok {
			members[id] = n.Data
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := members[m.id]; !ok && m.err == nil {
		// Our node is on its way back after a session loss: we are still a member.
		members[m.id] = bytes.Clone(m.payload)
	}
	return members
}

// Listen calls fn with the members (as Members gives them) after every change of the
// group seen, in order, from one goroutine, never two calls at once. stop ends the
// calls; it does not wait for one under way.
func (m *Member) Listen(fn func(map[string][]byte)) (stop func()) {
	return m.members.Listen(func(e cache.Event) {
		switch e.Type {
		case cache.Created, cache.Changed, cache.Deleted:
			if path.Dir(e.Path) != m.path {
				return // the group's own node, not a member
			}
		case cache.Initialized:
		default: // the connection's news: the members change only by the events above
			return
		}
		fn(m.Members())
	})
}

// SetPayload gives our node new data, and returns once the node holds it, or when
// ctx ends (an error wrapping ctx's; the payload is kept and written once the node
// can be reached). A member made with FixedPayload returns ErrFixedPayload, and
// sends nothing.
func (m *Member) SetPayload(ctx context.Context, payload []byte) error {
	if m.fixed {
		return fmt.Errorf("group: setting the payload of %q: %w", m.id, ErrFixedPayload)
	}
	m.mu.Lock()
	if m.state.State() == lifecycle.Closed {
		m.mu.Unlock()
		return ErrClosed
	}
	m.payload = bytes.Clone(payload)
	m.mu.Unlock()
	if err := m.node.SetData(ctx, payload); err != nil {
		return fmt.Errorf("group: setting the payload of %q: %w", m.id, err)
	}
	return nil
}

// ID is this member's id.
func (m *Member) ID() string { return m.id }

// Close leaves the group: our node is deleted (in the background if the
// connection is down) and the list stops following it. A second Close returns nil.
func (m *Member) Close(ctx context.Context) error {
	if m.state.Close() == lifecycle.Closed {
		return nil
	}
	m.stop(ErrClosed)
	err := m.members.Close(ctx)
	m.tel.close()
	if err2 := m.node.Close(ctx); err2 != nil && !errors.Is(err2, nodes.ErrClosed) {
		err = errors.Join(err, err2)
	}
	if err != nil {
		return fmt.Errorf("group: leaving %s: %w", m.path, err)
	}
	return nil
}

// Done is closed when this member stops following the group: its client closed (the
// listeners of Listen hear no more changes then), or Close. Err says which.
func (m *Member) Done() <-chan struct{} { return m.done }

// Err is nil until Done is closed; then an error wrapping framework.ErrClosed if the
// client closed, or ErrClosed after Close.
func (m *Member) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}

// stop records why the member stopped, the first time.
func (m *Member) stop(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err == nil {
		m.err = err
		close(m.done)
	}
}
