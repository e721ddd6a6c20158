package semaphore

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sync/atomic"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/zkrecipes/recipes/internal/hold"
	"github.com/zkrecipes/zkrecipes/recipes/internal/lockqueue"
)

var (
	// ErrNoLeases is returned by TryAcquire when not enough leases are free.
	ErrNoLeases = errors.New("semaphore: no leases available")
	// ErrNotHeld is returned by Release on a Mutex that is not held, and on a Lease
	// that was already released.
	ErrNotHeld = errors.New("semaphore: not held")
	// ErrLost is returned by Release when the lease had been lost before it: its
	// session ended, or someone deleted its node.
	ErrLost = errors.New("semaphore: lease lost")
	// ErrInvalid is wrapped by the errors for bad arguments.
	ErrInvalid = errors.New("semaphore: invalid argument")
)

// The node names of Curator's InterProcessSemaphoreV2: P/locks/_c_<uuid>-lock-<seq>
// and P/leases/_c_<uuid>-lease-<seq>.
const (
	locksDir  = "locks"
	leasesDir = "leases"
	lockName  = "lock-"
	leaseName = "lease-"
)

// Participant is one lease node, in sequence order.
type Participant = lockqueue.Participant

// Option configures a Semaphore or a Mutex. An option given a value it cannot take
// makes New or NewMutex return an error wrapping ErrInvalid that names the option.
type Option func(*options) error

type options struct{ id string }

// WithID sets the participant id stored as the data of our nodes, shown by
// Participants and `zkr inspect`. Default "host:pid". An empty id is refused.
func WithID(id string) Option {
	return func(o *options) error { return args.SetID(&o.id, id) }
}

// Semaphore is a participant in the counting semaphore at a path. One value may be
// used by many goroutines; each Acquire is a participant of its own.
type Semaphore struct {
	c      *framework.Client
	path   string
	max    int
	id     []byte
	lock   *lockqueue.Queue // the internal lock, P/locks
	leases *lockqueue.Queue // P/leases: held while at most max lease nodes exist
	// observer measures an acquisition of leases as one; the leases queue measures
	// each lease's hold.
	observer *lockqueue.Observer
}

// New makes a participant in the semaphore at path, with maxLeases leases. Every
// participant of the path must use the same maxLeases. Nothing is sent to ZooKeeper
// until an acquisition.
func New(c *framework.Client, path string, maxLeases int, opts ...Option) (*Semaphore, error) {
	return named(c, path, maxLeases, "semaphore", opts)
}

// named is New for recipe, the name it is measured under.
func named(c *framework.Client, path string, maxLeases int, recipe string, opts []Option) (*Semaphore, error) {
	o := options{id: args.DefaultID()}
	if err := args.Check(c, path); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if maxLeases < 1 {
		return nil, fmt.Errorf("%w: maxLeases %d is not positive", ErrInvalid, maxLeases)
	}
	if err := args.Apply(&o, opts); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	observer := lockqueue.Observe(c, recipe)
	return &Semaphore{
		c:    c,
		path: path,
		max:  maxLeases,
		id:   []byte(o.id),
		lock: lockqueue.New(c, join(path, locksDir), lockName, lockqueue.Exclusive, lockqueue.HandOverOnNotification(),
			lockqueue.Unwatched()), // its loss is harmless: see TryAcquire
		leases: lockqueue.New(c, join(path, leasesDir), leaseName, lockqueue.Count(maxLeases),
			lockqueue.WatchChildren(), lockqueue.Observed(observer.HoldsOnly())),
		observer: observer,
	}, nil
}

func join(p, dir string) string { return path.Join(p, dir) }

// Acquire waits until it holds n leases, ctx ends (an error wrapping ctx.Err()), or
// the client closes. It takes all n or none: on failure, the leases it took are
// released and its nodes deleted before the error returns.
//
// Waiting acquirers queue on the semaphore's internal lock, and only the first of
// them watches the leases, so a release wakes one waiter. Unlike Curator, which
// takes that lock once per lease, Acquire keeps it until it has all n leases. So two
// acquirers of several leases cannot each hold part of what they need and wait on
// each other.
func (s *Semaphore) Acquire(ctx context.Context, n int) ([]*Lease, error) {
	if err := s.check(n); err != nil {
		return nil, err
	}
	a := s.observer.Begin(ctx, s.leases.Path(), true)
	leases, err := s.acquire(ctx, n)
	s.end(&a, leases, err)
	return leases, err
}

func (s *Semaphore) acquire(ctx context.Context, n int) ([]*Lease, error) {
	lock, err := s.lock.Acquire(ctx, s.id, lockqueue.Options{Wait: true})
	if err != nil {
		return nil, s.wrap(ctx, "acquire", err)
	}
	// Release the lock even when ctx is done; Release uses a bounded context of its
	// own for the delete, and if the lock's session has ended there is nothing to
	// delete.
	defer func() { _ = lock.Release(context.WithoutCancel(ctx)) }()
	return s.take(ctx, n, true)
}

// TryAcquire takes n leases only if they are free now; it never waits for another
// holder. When they are not, it returns an error wrapping ErrNoLeases. It takes all
// n or none.
//
// TryAcquire does not queue on the internal lock, because an Acquire that waits
// holds that lock for as long as it waits. That is safe because the lock only
// makes waiting fair and quiet. The lease count alone keeps holders within
// maxLeases. A participant holds only if it counted at most maxLeases nodes, its own
// included, after creating its node. Take any set of holders. Each one's node
// existed before its own count, so it existed at the count of whichever holder
// counted last. That count therefore saw every holder's node, and it was at most
// maxLeases. Two participants that count at the same time may both see too many
// nodes and both fail, but never both succeed past the limit.
func (s *Semaphore) TryAcquire(ctx context.Context, n int) ([]*Lease, error) {
	if err := s.check(n); err != nil {
		return nil, err
	}
	a := s.observer.Begin(ctx, s.leases.Path(), false)
	leases, err := s.take(ctx, n, false)
	s.end(&a, leases, err)
	return leases, err
}

// end ends the measurement of an acquisition of leases, the semaphore's whole
// acquisition being one, with the hold of its lease if it took one.
func (s *Semaphore) end(a *lockqueue.Acquisition, leases []*Lease, err error) {
	var h *lockqueue.Held
	if len(leases) == 1 {
		h = leases[0].h
	}
	if errors.Is(err, ErrNoLeases) {
		err = lockqueue.ErrWouldBlock // the engine's name for a refusal
	}
	a.End(h, err)
}

func (s *Semaphore) check(n int) error {
	if n < 1 || n > s.max {
		return fmt.Errorf("%w: %d leases asked of a semaphore of %d", ErrInvalid, n, s.max)
	}
	return nil
}

// take acquires n leases one after the other, or none.
func (s *Semaphore) take(ctx context.Context, n int, wait bool) ([]*Lease, error) {
	leases := make([]*Lease, 0, n)
	for range n {
		h, err := s.lease(ctx, wait)
		if err != nil {
			for _, l := range leases {
				_ = l.Release(context.WithoutCancel(ctx))
			}
			op := "acquire"
			if !wait {
				op = "try to acquire"
			}
			return nil, s.wrap(ctx, op, err)
		}
		leases = append(leases, &Lease{h: h})
	}
	return leases, nil
}

// lease takes one lease: our node under P/leases, held once at most maxLeases lease
// nodes exist. Only the internal lock's holder waits here, so its watch on the
// leases' children wakes no herd.
func (s *Semaphore) lease(ctx context.Context, wait bool) (*lockqueue.Held, error) {
	h, err := s.leases.Acquire(ctx, s.id, lockqueue.Options{Wait: wait})
	if errors.Is(err, lockqueue.ErrWouldBlock) {
		return nil, ErrNoLeases
	}
	return h, err
}

// wrap names the semaphore in err, and makes sure an error after ctx ended wraps
// ctx.Err().
func (s *Semaphore) wrap(ctx context.Context, op string, err error) error {
	if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		return fmt.Errorf("semaphore: %s %s: %w: %w", op, s.path, ctx.Err(), err)
	}
	return fmt.Errorf("semaphore: %s %s: %w", op, s.path, err)
}

// Do acquires n leases (see Acquire), runs fn with them under a context that ends
// when any of them may have been lost (see Lease.Context), and releases them when fn
// returns, even if it panics (the panic then goes on). It returns Acquire's error,
// or fn's joined with the releases': one wrapping ErrLost means a lease may have
// been lost while fn ran.
func (s *Semaphore) Do(ctx context.Context, n int, fn func(ctx context.Context, leases []*Lease) error) error {
	if fn == nil {
		return fmt.Errorf("%w: nil function", ErrInvalid)
	}
	h := &leaseSet{s: s, n: n}
	return hold.Do(ctx, h, func(ctx context.Context) error { return fn(ctx, h.leases) }, ErrInvalid)
}

// leaseSet is the n leases of one Do, as one hold.
type leaseSet struct {
	s      *Semaphore
	n      int
	leases []*Lease
}

func (h *leaseSet) Acquire(ctx context.Context) (err error) {
	h.leases, err = h.s.Acquire(ctx, h.n)
	return err
}

func (h *leaseSet) Release(ctx context.Context) error {
	errs := make([]error, len(h.leases))
	for i, l := range h.leases {
		errs[i] = l.Release(ctx)
	}
	return errors.Join(errs...)
}

func (h *leaseSet) Context(parent context.Context) (context.Context, context.CancelFunc) {
	lost := make([]<-chan struct{}, len(h.leases))
	for i, l := range h.leases {
		lost[i] = l.Lost()
	}
	return hold.ContextFunc(parent, func() error {
		for _, l := range h.leases {
			if cause := l.h.Cause(); cause != nil {
				return fmt.Errorf("%w: %s: %w", ErrLost, l.Node(), cause)
			}
		}
		return fmt.Errorf("%w: a lease of %s", ErrLost, h.s.path)
	}, lost...)
}

// Participants lists the lease nodes in sequence order, with each one's id. Holder
// is set for the first maxLeases of them. Past those, nodes belong to acquirers
// that wait or are still counting.
func (s *Semaphore) Participants(ctx context.Context) ([]Participant, error) {
	ps, err := s.leases.Participants(ctx)
	if err != nil {
		return nil, fmt.Errorf("semaphore: participants of %s: %w", s.path, err)
	}
	for i := range ps {
		ps[i].Holder = i < s.max
	}
	return ps, nil
}

// Lease is one lease of a Semaphore. It lasts until Release or the end of its
// session.
type Lease struct {
	h        *lockqueue.Held
	released atomic.Bool
}

// Release gives the lease back: its node is deleted (in the background if the
// connection is down). It returns an error wrapping ErrLost if the lease had been
// lost before, and one wrapping ErrNotHeld if it was already released.
func (l *Lease) Release(ctx context.Context) error {
	if l == nil || l.h == nil {
		return fmt.Errorf("%w: nil lease", ErrNotHeld)
	}
	if l.released.Swap(true) {
		return fmt.Errorf("%w: lease %s was already released", ErrNotHeld, l.h.Node.Path)
	}
	err := l.h.Release(ctx)
	switch {
	case errors.Is(err, lockqueue.ErrLost):
		return fmt.Errorf("%w: %w", ErrLost, err)
	case errors.Is(err, framework.ErrDeleteInBackground):
		return nil // released: the client deletes the node as soon as it can
	case err != nil:
		return fmt.Errorf("semaphore: release %s: %w", l.h.Node.Path, err)
	}
	return nil
}

// Node is the path of the lease's node.
func (l *Lease) Node() string {
	if l == nil || l.h == nil {
		return ""
	}
	return l.h.Node.Path
}

// Lost closes when the lease may have been lost: the client's error policy counted
// a connection state as an error (StandardErrorPolicy: Suspended or Lost), the
// client closed, or its node was deleted. It also closes on Release. Stop using what the lease protects when it closes.
func (l *Lease) Lost() <-chan struct{} {
	if l == nil || l.h == nil {
		return hold.Closed
	}
	return l.h.Lost()
}

// Context returns a copy of parent that ends when the lease may have been lost
// (Lost closes) or is released, with a context.Cause that wraps ErrLost and says
// why: run the work that
// the lease allows under it. Call the CancelFunc when the work is over.
func (l *Lease) Context(parent context.Context) (context.Context, context.CancelFunc) {
	if l == nil || l.h == nil {
		return hold.Context(parent, fmt.Errorf("%w: nil lease", ErrNotHeld), hold.Closed)
	}
	return l.h.Context(parent, fmt.Errorf("%w: %s", ErrLost, l.Node()))
}

// FencingToken is the lease node's czxid, the zxid of its creation, as `zkr
// inspect` shows it. Leases are granted in their nodes' order, so with one lease
// (the semaphore's Mutex) it grows from one holder to the next and a store can refuse
// a writer whose lease is over. With several, leases run side by side: a token then
// orders the leases' queueing, and a lease taken by TryAcquire while an Acquire
// waited may have a greater token than the waiter's, granted later.
func (l *Lease) FencingToken() int64 {
	if l == nil || l.h == nil {
		return 0
	}
	return l.h.FencingToken()
}
