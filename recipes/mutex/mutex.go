package mutex

import (
	"context"
	"errors"
	"fmt"
	"path"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/zkrecipes/recipes/internal/hold"
	"github.com/zkrecipes/zkrecipes/recipes/internal/lockqueue"
)

var (
	// ErrNotHeld is returned by Release on a Mutex that does not hold the lock.
	ErrNotHeld = errors.New("mutex: not held")
	// ErrLost is returned by Release when the hold had been lost before it (the
	// session ended, or the node was deleted), and by Acquire on a value whose hold is
	// lost but not yet released. After Release the value can Acquire again.
	ErrLost = errors.New("mutex: lock lost")
	// ErrInvalid is wrapped by the errors for bad arguments.
	ErrInvalid = errors.New("mutex: invalid argument")
)

// LockName is what a Mutex names its nodes, before the server's sequence number, as
// Curator's InterProcessMutex does: a lock's participants are P/_c_<uuid>-lock-<seq>.
const LockName = "lock-"

// Participant is one node of the queue, in order.
type Participant = lockqueue.Participant

// Option configures a Mutex. An option given a value it cannot take makes New return
// an error wrapping ErrInvalid that names the option.
type Option func(*options) error

type options struct {
	id       string
	onRevoke func()
}

// WithID sets the participant id stored as the node's data, shown by Participants
// and `zkr inspect`. Default "host:pid". An empty id is refused.
func WithID(id string) Option {
	return func(o *options) error { return args.SetID(&o.id, id) }
}

// WithRevocationListener calls fn, on a goroutine of its own, when another client
// asks the holder to release (Revoke). What to do is up to fn, typically to finish
// the work at hand and Release. Reading the request costs one more request per
// acquisition (every holder already watches its node, for its deletion). fn may be
// called more than once for one request (each notification of a change to the
// node's data is read again), as Curator's listener may. Default none: a revocation
// request is not read. A nil fn is refused.
func WithRevocationListener(fn func()) Option {
	return func(o *options) error {
		if fn == nil {
			return errors.New("WithRevocationListener: nil listener")
		}
		o.onRevoke = fn
		return nil
	}
}

// Mutex is one participant in the lock at a path.
type Mutex struct {
	q *lockqueue.Queue
	r *lockqueue.Reentrant
}

// New makes a participant in the lock at path. Nothing is sent to ZooKeeper until
// Acquire.
func New(c *framework.Client, path string, opts ...Option) (*Mutex, error) {
	o := options{id: args.DefaultID()}
	if err := args.Check(c, path); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := args.Apply(&o, opts); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	q := lockqueue.New(c, path, LockName, lockqueue.Exclusive, lockqueue.HandOverOnNotification(), lockqueue.WatchOwnNodeWhileQueued(), lockqueue.OnRevoke(o.onRevoke),
		lockqueue.Observed(lockqueue.Observe(c, "mutex")))
	id := []byte(o.id)
	r := lockqueue.NewReentrant(func(ctx context.Context, wait bool) (*lockqueue.Held, error) {
		return q.Acquire(ctx, id, lockqueue.Options{Wait: wait})
	})
	return &Mutex{q: q, r: r}, nil
}

// Acquire waits until this value holds the lock, ctx ends (an error wrapping
// ctx.Err()), or the client closes. If the value already holds it, Acquire counts up
// at once. Our node is gone before an error returns. A ctx that has ended already
// gives its error even while the value holds, and does not count up.
func (m *Mutex) Acquire(ctx context.Context) error {
	_, err := m.r.Acquire(ctx, true)
	return m.wrap("acquire", err)
}

// TryAcquire takes the lock only if nobody holds it or waits for it before us; it
// never waits for another holder. It reports whether this value holds the lock. A
// ctx that has ended already gives its error, as Acquire's does.
func (m *Mutex) TryAcquire(ctx context.Context) (bool, error) {
	ok, err := m.r.Acquire(ctx, false)
	return ok, m.wrap("acquire", err)
}

// Release counts down, and releases the lock when the count reaches zero: our node
// is deleted (in the background if the connection is down). It returns ErrNotHeld
// when the value does not hold the lock, and an error wrapping ErrLost when the hold
// had been lost before; either way the value is then free to Acquire again.
func (m *Mutex) Release(ctx context.Context) error {
	return m.wrap("release", m.r.Release(ctx))
}

// wrap gives lockqueue's errors this package's names. The name of the call is
// built only for an error: every Acquire and Release comes through here.
func (m *Mutex) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return lockqueue.Rename(err, ErrNotHeld, ErrLost, "mutex: "+op+" "+m.q.Path())
}

// IsAcquired reports whether this value holds the lock and has not lost it.
func (m *Mutex) IsAcquired() bool { return m.r.IsAcquired() }

// Lost closes when the hold may have been lost: the client's error policy counted a
// connection state as an error (StandardErrorPolicy: Suspended or Lost), the client
// closed, or our node was deleted (by another client, or by a server that lost it).
// Stop using what the lock protects when it closes. Without a hold it is closed.
func (m *Mutex) Lost() <-chan struct{} { return m.r.Lost() }

// Context returns a copy of parent that ends when the hold may have been lost (Lost
// closes) or is released, with a context.Cause that wraps ErrLost and says why
// (lockqueue's reasons: the node was deleted, the session expired, the connection was
// suspended): run the work that the lock protects under it. Without a hold it has
// ended already when Context returns, with ErrNotHeld. Call the CancelFunc when the
// work is over.
func (m *Mutex) Context(parent context.Context) (context.Context, context.CancelFunc) {
	return m.r.Context(parent, ErrNotHeld, fmt.Errorf("%w: %s", ErrLost, m.q.Path()))
}

// Do acquires the lock (see Acquire), runs fn under Context, and releases the lock
// when fn returns, even if it panics (the panic then goes on). It returns Acquire's
// error, or fn's joined with Release's: one wrapping ErrLost means the lock may have
// been lost while fn ran.
func (m *Mutex) Do(ctx context.Context, fn func(ctx context.Context) error) error {
	return hold.Do(ctx, m, fn, ErrInvalid)
}

// FencingToken is a number that grows with every holder of the lock, while it is
// held, else 0: pass it to a store that refuses writes with a token lower than one it
// has seen. It is our node's czxid, the zxid of its creation, which Participants,
// `zkr inspect` and `zkr ui` show too: holders are granted in their nodes' order, so tokens of
// one lock increase across holders, sessions and the removal of the lock's container
// parent, within one ensemble's history: an ensemble rebuilt empty or restored from
// an older copy starts them again lower, and the client says so (framework.Rebuilt).
func (m *Mutex) FencingToken() int64 { return m.r.FencingToken() }

// Node is our node's path while the lock is held, else "".
func (m *Mutex) Node() string { return m.r.Node() }

// Participants lists the queue in order, the holder first, with each one's id.
func (m *Mutex) Participants(ctx context.Context) ([]Participant, error) {
	ps, err := m.q.Participants(ctx)
	if err != nil {
		return nil, fmt.Errorf("mutex: participants of %s: %w", m.q.Path(), err)
	}
	return ps, nil
}

// Revoke asks the holder of node (a participant's path, as Participants lists it) to
// release, by writing Curator's revocation message into it. Only a holder with a
// revocation listener hears it; releasing is up to the holder. A path whose last
// segment is not a lock node's name is refused (ErrInvalid) before anything is
// written, since the message would overwrite another node's data.
func Revoke(ctx context.Context, c *framework.Client, node string) error {
	if c == nil {
		return fmt.Errorf("%w: nil client", ErrInvalid)
	}
	if err := framework.ValidatePath(node); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if _, ok := lockqueue.Sequence(path.Base(node), []string{LockName}); !ok {
		return fmt.Errorf("%w: %q is not a lock participant's node", ErrInvalid, node)
	}
	if _, err := c.Set(ctx, node, []byte(lockqueue.RevokeMessage), -1); err != nil {
		if errors.Is(err, framework.ErrNoNode) {
			return fmt.Errorf("mutex: revoke %s: no such participant: %w", path.Base(node), err)
		}
		return fmt.Errorf("mutex: revoke: %w", err)
	}
	return nil
}
