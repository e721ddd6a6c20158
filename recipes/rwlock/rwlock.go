package rwlock

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/zkrecipes/recipes/internal/hold"
	"github.com/zkrecipes/zkrecipes/recipes/internal/lockqueue"
)

var (
	// ErrUpgrade is returned at once by the write lock's Acquire while the same
	// RWLock holds the read lock: waiting would never end, since the writer would
	// wait for our own reader.
	ErrUpgrade = errors.New("rwlock: cannot upgrade a read lock to the write lock")
	// ErrNotHeld is returned by Release on a Lock that is not held.
	ErrNotHeld = errors.New("rwlock: not held")
	// ErrLost is returned by Release when the hold had been lost before it.
	ErrLost = errors.New("rwlock: lock lost")
	// ErrInvalid is wrapped by the errors for bad arguments.
	ErrInvalid = errors.New("rwlock: invalid argument")
)

// Participant is one node of the queue, in order.
type Participant = lockqueue.Participant

// Option configures an RWLock. An option given a value it cannot take makes New
// return an error wrapping ErrInvalid that names the option.
type Option func(*options) error

type options struct {
	id                  string
	readName, writeName string
}

// WithID sets the participant id stored as the nodes' data. Default "host:pid". An
// empty id is refused.
func WithID(id string) Option {
	return func(o *options) error { return args.SetID(&o.id, id) }
}

// WithCuratorNames names the nodes as Curator's InterProcessReadWriteLock does,
// __READ__ and __WRIT__, so that Go and Java processes can share the lock. Default
// read- and write-.
func WithCuratorNames() Option {
	return func(o *options) error {
		o.readName, o.writeName = "__READ__", "__WRIT__"
		return nil
	}
}

// RWLock is one participant's pair of locks on a path: a read lock and a write lock.
type RWLock struct {
	read, write *Lock
}

// Lock is one side of an RWLock.
type Lock struct {
	q    *lockqueue.Queue
	r    *lockqueue.Reentrant
	name string
}

// New makes a participant's read and write locks on path. Nothing is sent to
// ZooKeeper until an Acquire.
func New(c *framework.Client, path string, opts ...Option) (*RWLock, error) {
	o := options{id: args.DefaultID(), readName: "read-", writeName: "write-"}
	if err := args.Check(c, path); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := args.Apply(&o, opts); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	names := []string{o.readName, o.writeName}
	// One rule for both sides, so that either side's Participants marks every node
	// by its own kind.
	rule := lockqueue.ReadWrite(o.writeName)
	id := []byte(o.id)
	l := &RWLock{
		read:  &Lock{q: lockqueue.New(c, path, o.readName, rule, lockqueue.Names(names...), lockqueue.WatchOwnNodeWhileQueued(), lockqueue.Observed(lockqueue.Observe(c, "rwlock.read"))), name: o.readName},
		write: &Lock{q: lockqueue.New(c, path, o.writeName, rule, lockqueue.Names(names...), lockqueue.WatchOwnNodeWhileQueued(), lockqueue.Observed(lockqueue.Observe(c, "rwlock.write"))), name: o.writeName},
	}
	l.write.r = lockqueue.NewReentrant(func(ctx context.Context, wait bool) (*lockqueue.Held, error) {
		if l.read.r.Held() != nil {
			return nil, ErrUpgrade
		}
		return l.write.q.Acquire(ctx, id, lockqueue.Options{Wait: wait})
	})
	l.read.r = lockqueue.NewReentrant(func(ctx context.Context, wait bool) (*lockqueue.Held, error) {
		if w := l.write.r.Held(); w != nil && l.write.r.IsAcquired() {
			if h, err := l.downgrade(ctx, c, id, names, w); h != nil || err != nil {
				return h, err
			}
		}
		return l.read.q.Acquire(ctx, id, lockqueue.Options{Wait: wait})
	})
	return l, nil
}

// downgrade stands a read node in the place of our write node w. The write node must
// still be ours once the read node exists: then it stood before every waiting writer
// when the read node was made, and no writer can have come in between. If the write
// lock went meanwhile (released by another goroutine, or lost), the read node is
// deleted and (nil, nil) says to queue as any reader.
func (l *RWLock) downgrade(ctx context.Context, c *framework.Client, id []byte, names []string, w *lockqueue.Held) (*lockqueue.Held, error) {
	seq, _ := lockqueue.Sequence(w.Node.Name(), names)
	h, err := l.read.q.HoldAt(ctx, id, seq)
	if err != nil {
		return nil, err
	}
	ok, stat, err := c.Exists(ctx, w.Node.Path)
	if err == nil && ok && stat.EphemeralOwner == w.Node.Session {
		return h, nil
	}
	_ = h.Release(ctx)
	return nil, err
}

// ReadLock is the read side: shared with other readers, excluded by a writer.
func (l *RWLock) ReadLock() *Lock { return l.read }

// WriteLock is the write side: alone.
func (l *RWLock) WriteLock() *Lock { return l.write }

// Acquire waits until this side holds, ctx ends (an error wrapping ctx.Err()), or
// the client closes; if it already holds, it counts up at once (but a ctx that has
// ended already gives its error even then, and does not count up). The read lock is
// granted at once while the same RWLock holds the write lock; the write lock returns
// ErrUpgrade while the same RWLock holds the read lock.
func (l *Lock) Acquire(ctx context.Context) error {
	_, err := l.r.Acquire(ctx, true)
	return l.wrap("acquire", err)
}

// TryAcquire takes this side only if it can hold at once; it never waits for another
// holder. A ctx that has ended already gives its error, as Acquire's does.
func (l *Lock) TryAcquire(ctx context.Context) (bool, error) {
	ok, err := l.r.Acquire(ctx, false)
	return ok, l.wrap("acquire", err)
}

// Release counts down, and releases when the count reaches zero. Releasing the write
// lock after a downgrade keeps the read lock.
func (l *Lock) Release(ctx context.Context) error { return l.wrap("release", l.r.Release(ctx)) }

func (l *Lock) wrap(op string, err error) error {
	if err == nil || errors.Is(err, ErrUpgrade) {
		return err
	}
	return lockqueue.Rename(err, ErrNotHeld, ErrLost, "rwlock: "+op+" "+l.q.Path()+"/"+l.name)
}

// IsAcquired reports whether this side holds and has not lost the hold.
func (l *Lock) IsAcquired() bool { return l.r.IsAcquired() }

// Lost closes when the hold may have been lost (see mutex.Mutex.Lost); without a
// hold it is closed.
func (l *Lock) Lost() <-chan struct{} { return l.r.Lost() }

// Context returns a copy of parent that ends when this side's hold may have been
// lost or is released, with a context.Cause that wraps ErrLost and says why; without
// a hold it has ended already, with ErrNotHeld (see mutex.Mutex.Context).
func (l *Lock) Context(parent context.Context) (context.Context, context.CancelFunc) {
	return l.r.Context(parent, ErrNotHeld, fmt.Errorf("%w: %s/%s", ErrLost, l.q.Path(), l.name))
}

// Do acquires this side, runs fn under Context, and releases it when fn returns,
// even if it panics (the panic then goes on). It returns Acquire's error, or fn's
// joined with Release's: one wrapping ErrLost means the hold may have been lost
// while fn ran.
func (l *Lock) Do(ctx context.Context, fn func(ctx context.Context) error) error {
	return hold.Do(ctx, l, fn, ErrInvalid)
}

// FencingToken is our node's czxid while held (as `zkr inspect` shows it), else 0.
// It grows with every writer, and with every reader after a writer: holders are
// granted in their nodes' order. One exception: a read lock taken by downgrading
// (under our own write lock) stands in the write lock's place with a node made at the
// downgrade, so a writer queued before the downgrade gets a lower token than that
// reader. Fence writes with writers' tokens.
func (l *Lock) FencingToken() int64 { return l.r.FencingToken() }

// Node is our node's path while held, else "".
func (l *Lock) Node() string { return l.r.Node() }

// Participants lists this side's nodes (readers, or writers) in queue order, with
// their ids and whether they hold.
func (l *Lock) Participants(ctx context.Context) ([]Participant, error) {
	all, err := l.q.Participants(ctx)
	if err != nil {
		return nil, fmt.Errorf("rwlock: participants of %s: %w", l.q.Path(), err)
	}
	var ps []Participant
	for _, p := range all {
		if strings.Contains(p.Node[strings.LastIndexByte(p.Node, '/')+1:], l.name) {
			ps = append(ps, p)
		}
	}
	return ps, nil
}
