package barrier

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"sync"

	"github.com/google/uuid"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/internal/attempt"
	"github.com/zkrecipes/zkrecipes/recipes/internal/lockqueue"
)

// readyName is the node the member that sees the barrier full makes, as Curator's
// does: its creation lets the waiting members pass.
const readyName = "ready"

type doubleState int

const (
	outside doubleState = iota
	entering
	inside
	leaving
)

// Double holds its members back twice: in Enter until the barrier is full, in Leave
// until all have left. Curator's DistributedDoubleBarrier, with its node layout.
type Double struct {
	c       *framework.Client
	path    string
	members int

	mu    sync.Mutex
	state doubleState
	node  *lockqueue.Node // our member node, while we have one

	tel telemetry
}

// NewDouble makes a member of the double barrier at path, which opens once members
// processes have entered (a threshold, not a limit: more may enter). Nothing is sent
// to ZooKeeper until Enter.
func NewDouble(c *framework.Client, path string, members int) (*Double, error) {
	if err := checkArgs(c, path); err != nil {
		return nil, err
	}
	if members <= 0 {
		return nil, fmt.Errorf("%w: %d members (at least 1)", ErrInvalid, members)
	}
	return &Double{c: c, path: path, members: members, tel: newTelemetry(c, "double_barrier", opEnter, opLeave)}, nil
}

// turn moves from one state to the next, or says why it cannot.
func (d *Double) turn(from, to doubleState, wrong error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.state != from {
		return wrong
	}
	d.state = to
	return nil
}

// Enter joins the barrier, with the node path/<uuid>, and blocks until members have
// joined. If our session ends while it waits, it joins again with a new node. When
// ctx ends first, or an error stops it, our node is deleted (the others never
// count us) and Enter may be called again; a ctx that has ended already gives its
// error and makes no node. Called before its client's first
// session, Enter waits for one as the client's operations do: one connection
// timeout at most, unless the client was made WithRetryBeforeFirstConnection; when
// none comes in time, it returns an error wrapping the client's
// *framework.ConnectError (and framework.ErrNoServer), having made no node, and may
// be called again.
func (d *Double) Enter(ctx context.Context) error {
	if err := d.turn(outside, entering, ErrEntered); err != nil {
		return err
	}
	call := d.tel.recipe.Call(ctx, opEnter, d.path)
	err := d.enter(ctx)
	call.End(d.tel.waits, outcome(err), err)
	if err != nil {
		d.dropNode(ctx)
		d.turn(entering, outside, nil)
		return fmt.Errorf("barrier: entering %s: %w", d.path, err)
	}
	d.turn(entering, inside, nil)
	return nil
}

func (d *Double) enter(ctx context.Context) error {
	if err := attempt.FirstSession(ctx, d.c); err != nil {
		return err
	}
	w := newWaiter(d.c)
	defer w.stop()
	readyPath := path.Join(d.path, readyName)
	var since int64 // the zxid of our first node: a ready node made after it is for us
	for {
		if err := d.ensureNode(ctx, &since); err != nil {
			if err = w.failed(ctx, err); err != nil {
				return err
			}
			continue
		}
		ok, ready, watch, err := d.c.ExistsW(ctx, readyPath)
		if err != nil {
			if err = w.failed(ctx, err); err != nil {
				return err
			}
			continue
		}
		if ok && ready.Czxid > since {
			return nil // made when the barrier was full, while we were in it
		}
		names, err := d.memberNames(ctx)
		if err != nil {
			if err = w.failed(ctx, err); err != nil {
				return err
			}
			continue
		}
		if !slices.Contains(names, d.ourName()) {
			d.dropNode(ctx) // gone, or of an earlier session: join anew
			continue
		}
		if len(names) >= d.members {
			_, err := d.c.Create(ctx, readyPath, localAddress())
			if err != nil && !errors.Is(err, framework.ErrNodeExists) {
				return err
			}
			return nil
		}
		if ok {
			// A ready node older than us while the barrier is not full: the leftover of
			// a round whose members went without deleting it (Curator would let us pass
			// on it). Remove it, so that its creation tells us again.
			err := d.c.Delete(ctx, readyPath, ready.Version)
			if err != nil && !errors.Is(err, framework.ErrNoNode) && !errors.Is(err, framework.ErrBadVersion) {
				return err
			}
			continue
		}
		if err := w.await(ctx, watch); err != nil {
			return err
		}
	}
}

// ensureNode makes our member node if we have none of the current session, and sets
// since to its czxid the first time.
func (d *Double) ensureNode(ctx context.Context, since *int64) error {
	for {
		d.mu.Lock()
		n := d.node
		d.mu.Unlock()
		if n != nil && n.Session == d.c.SessionID() {
			return nil
		}
		d.dropNode(ctx) // of an earlier session: nobody's
		p := path.Join(d.path, uuid.NewString())
		// Ours before the create is sent: a create that ends with ctx may still be
		// applied, and the node must then be deleted with the others.
		n = &lockqueue.Node{Path: p}
		d.mu.Lock()
		d.node = n
		d.mu.Unlock()
		_, err := d.c.Create(ctx, p, localAddress(), framework.Ephemeral(), framework.CreatingParentContainers())
		if err != nil && !errors.Is(err, framework.ErrNodeExists) { // exists: our create, whose reply was lost
			return err
		}
		ok, stat, err := d.c.Exists(ctx, p)
		if err != nil {
			return err // the node is dropped on the next round: its session is unknown
		}
		if ok {
			// Not the current session's if the session changed around the create:
			// then dropped on the next round.
			n.Session = stat.EphemeralOwner
			if *since == 0 {
				*since = stat.Czxid
			}
		}
	}
}

// dropNode deletes our member node, if we have one, with a context of its own: ctx
// may be the one whose end made us give up.
func (d *Double) dropNode(ctx context.Context) {
	d.mu.Lock()
	n := d.node
	d.node = nil
	d.mu.Unlock()
	if n != nil {
		_ = n.Delete(ctx, d.c)
	}
}

func (d *Double) ourName() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.node == nil {
		return ""
	}
	return d.node.Name()
}

// memberNames lists the members' nodes, sorted as Curator sorts them.
func (d *Double) memberNames(ctx context.Context) ([]string, error) {
	names, _, err := d.c.Children(ctx, d.path)
	if errors.Is(err, framework.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	names = slices.DeleteFunc(names, func(n string) bool { return n == readyName })
	slices.Sort(names)
	return names, nil
}

// Leave leaves the barrier and blocks until every member has left. As in
// Curator's, the lowest member waits for the highest to go, the others delete their
// nodes and wait for the lowest; the last to go deletes the ready node.
//
// A member whose session ended after Enter counts as gone for the others (its node
// went with its session), who may pass Leave before it: its own Leave still waits
// for the others to leave, then returns an error wrapping ErrLost. When ctx ends,
// Leave deletes our node (the others count us as gone) and returns ctx's error.
func (d *Double) Leave(ctx context.Context) error {
	if err := d.turn(inside, leaving, ErrNotEntered); err != nil {
		return err
	}
	call := d.tel.recipe.Call(ctx, opLeave, d.path)
	lost, err := d.leave(ctx)
	if lost && err == nil {
		call.End(d.tel.waits, outcomeLost, nil)
	} else {
		call.End(d.tel.waits, outcome(err), err)
	}
	d.dropNode(ctx)
	d.turn(leaving, outside, nil)
	switch {
	case err != nil:
		d.tidy(ctx)
		return fmt.Errorf("barrier: leaving %s: %w", d.path, err)
	case lost:
		return fmt.Errorf("barrier: leaving %s: %w", d.path, ErrLost)
	}
	return nil
}

// tidy deletes the ready node once no member is left, after a Leave that gave up:
// a leftover ready node would let Curator's members of the next round pass alone.
func (d *Double) tidy(ctx context.Context) {
	ctx, cancel := attempt.CleanupContext(ctx)
	defer cancel()
	if names, err := d.memberNames(ctx); err == nil && len(names) == 0 {
		_ = d.c.Delete(ctx, path.Join(d.path, readyName), -1)
	}
}

func (d *Double) leave(ctx context.Context) (lost bool, err error) {
	w := newWaiter(d.c)
	defer w.stop()
	d.mu.Lock()
	n := d.node
	d.mu.Unlock()
	if n == nil || n.Session != d.c.SessionID() {
		lost = true
		d.dropNode(ctx) // of an earlier session: nobody's
	}
	for first := true; ; first = false {
		names, err := d.memberNames(ctx)
		if err != nil {
			if err = w.failed(ctx, err); err != nil {
				return lost, err
			}
			continue
		}
		ours := d.ourName()
		i := slices.Index(names, ours)
		if i < 0 && ours != "" {
			// Gone with our session, or deleted: before Leave if this is its first look.
			lost = lost || first
			d.dropNode(ctx)
		}
		var watched string
		switch {
		case len(names) == 0:
			err = d.c.Delete(ctx, path.Join(d.path, readyName), -1)
			if err != nil && !errors.Is(err, framework.ErrNoNode) {
				return lost, err
			}
			return lost, nil
		case i >= 0 && len(names) == 1:
			d.dropNode(ctx) // the last one
			continue
		case i == 0:
			watched = names[len(names)-1]
		default:
			if i > 0 {
				d.dropNode(ctx)
			}
			watched = names[0]
		}
		_, _, watch, err := d.c.GetW(ctx, path.Join(d.path, watched))
		switch {
		case errors.Is(err, framework.ErrNoNode):
			continue
		case err != nil:
			err = w.failed(ctx, err)
		default:
			err = w.await(ctx, watch)
		}
		if err != nil {
			return lost, err
		}
	}
}
