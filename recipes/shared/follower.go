package shared

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/notify"
	"github.com/zkrecipes/zkrecipes/recipes/cache"
	"github.com/zkrecipes/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/zkrecipes/recipes/internal/lifecycle"
	"github.com/zkrecipes/zkrecipes/recipes/internal/nodewrite"
)

// follower is what a Value and a Count are: a node followed through a cache of it
// alone, written with nodewrite, its data read as a T.
type follower[T any] struct {
	client *framework.Client
	path   string
	node   nodewrite.Node
	seed   []byte
	decode func([]byte) (T, error) // returns a fresh T: callers may keep it

	state     lifecycle.Lifecycle
	listeners *notify.Listeners[reading] // each listener decodes a T of its own

	mu        sync.Mutex
	ca        *cache.Cache   // set once the value is followed
	data      []byte         // the current value's data, never changed in place
	stat      framework.Stat // its stat: Version, and Mzxid to order values by
	delivered int64          // the Mzxid of the last value the listeners heard

	tel telemetry
}

// newFollower makes the follower of a Value or a Count, recipe ("shared_value",
// "shared_count") as its telemetry names it.
func newFollower[T any](c *framework.Client, recipe, path string, seed []byte, decode func([]byte) (T, error)) (*follower[T], error) {
	if err := args.Check(c, path); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if _, err := decode(seed); err != nil {
		return nil, fmt.Errorf("%w: seed: %w", ErrInvalid, err)
	}
	seed = append([]byte(nil), seed...)
	return &follower[T]{client: c, path: path, node: nodewrite.New(c, path), seed: seed,
		decode: decode, data: seed, stat: framework.Stat{Version: -1}, listeners: notify.New[reading](), tel: newTelemetry(c, recipe)}, nil
}

// Start creates the node with the seed if it does not exist (with container
// parents), and returns once the node's value is loaded. If ctx ends first, Start
// returns its error: before the node was created nothing goes on and Start may be
// called again; after it, the value goes on loading in the background (Close stops
// it). A second Start returns ErrStarted; Start after Close, ErrClosed.
func (f *follower[T]) Start(ctx context.Context) error {
	if err := f.state.Start(ErrStarted, ErrClosed); err != nil {
		return err
	}
	_, err := f.client.Create(ctx, f.path, f.seed, framework.CreatingParentContainers())
	if err != nil && !errors.Is(err, framework.ErrNodeExists) {
		f.state.Unstart()
		return fmt.Errorf("shared: start %s: %w", f.path, err)
	}
	ca, err := cache.New(f.client, f.path, cache.Depth(0))
	if err != nil {
		f.state.Unstart()
		return fmt.Errorf("shared: start %s: %w", f.path, err)
	}
	ca.Listen(f.heard)
	f.mu.Lock()
	if f.state.State() == lifecycle.Closed { // Close came meanwhile
		f.mu.Unlock()
		_ = ca.Close(ctx)
		return ErrClosed
	}
	f.ca = ca
	f.listeners.Start(nil)
	f.mu.Unlock()
	if err := ca.Start(ctx); err != nil {
		return fmt.Errorf("shared: start %s: %w", f.path, err)
	}
	if n, ok := ca.Get(f.path); ok {
		if _, err := f.decode(n.Data); err != nil {
			_ = f.Close(context.WithoutCancel(ctx))
			return fmt.Errorf("shared: start %s: %w", f.path, err)
		}
	}
	return nil
}

// heard takes a value the cache read: newer values (by Mzxid, the order in which the
// server wrote them) become the current one, and the listeners hear each value newer
// than the last they heard. Data that is not a T is skipped. When the client closes,
// the listeners hear the current value once more, with the cache's Err.
func (f *follower[T]) heard(ev cache.Event) {
	if ev.Type == cache.Stopped {
		f.stopped(fmt.Errorf("shared: %s: %w", f.path, ev.Err))
		return
	}
	if ev.Type == cache.Deleted && ev.Path == f.path {
		// The node's next incarnation starts the order afresh: in the same history its
		// values are later anyway, and on a rebuilt ensemble (framework.Rebuilt, after
		// which the cache deletes and creates every node again) its mzxids start
		// again lower, and would be taken for older values for good.
		f.mu.Lock()
		f.stat.Mzxid, f.delivered = 0, 0
		f.mu.Unlock()
		return
	}
	if (ev.Type != cache.Created && ev.Type != cache.Changed) || ev.Path != f.path {
		return
	}
	if _, err := f.decode(ev.New.Data); err != nil {
		f.client.ForRecipes().Logger().Warn("zkrecipes: shared value skipped", "path", f.path, "error", err)
		return
	}
	f.mu.Lock()
	f.update(ev.New.Data, ev.New.Stat)
	if ev.New.Stat.Mzxid <= f.delivered || f.state.State() == lifecycle.Closed {
		f.mu.Unlock()
		return
	}
	f.delivered = ev.New.Stat.Mzxid
	f.mu.Unlock()
	f.tell(ev.New.Data, ev.New.Stat.Version, nil)
}

// stopped tells the listeners the last value known, with err.
func (f *follower[T]) stopped(err error) {
	f.mu.Lock()
	data, version := f.data, f.stat.Version
	f.mu.Unlock()
	f.tell(data, version, err)
}

// reading is a value as the listeners hear it, before it is decoded.
type reading struct {
	data    []byte
	version int32
	err     error
}

// tell queues a value for the listeners.
func (f *follower[T]) tell(data []byte, version int32, err error) {
	f.listeners.Push(reading{data: data, version: version, err: err})
}

// update makes data the current value if it is newer; f.mu is held.
func (f *follower[T]) update(data []byte, stat framework.Stat) {
	if stat.Mzxid > f.stat.Mzxid {
		f.data, f.stat = data, stat
	}
}

// Get returns the current value: the newest of those this client read or wrote.
func (f *follower[T]) Get() Versioned[T] {
	f.mu.Lock()
	data, version := f.data, f.stat.Version
	f.mu.Unlock()
	v, _ := f.decode(data)
	return Versioned[T]{Value: v, Version: version}
}

// Listen registers fn to hear every new value after this call, in the order the
// server wrote them, on one goroutine, never two calls at once: each value newer
// than the last heard, so versions never go back (unless the node is deleted and
// made again, which starts its version at 0). A value overtaken before it was read
// is not heard, but the last one always is. Register before Start to hear the first
// value. fn must not block for long: later values wait for it. stop unregisters fn.
func (f *follower[T]) Listen(fn func(Versioned[T])) (stop func()) {
	if fn == nil || f.state.State() == lifecycle.Closed {
		return func() {}
	}
	return f.listeners.Listen(func(r reading) {
		v, _ := f.decode(r.data)
		fn(Versioned[T]{Value: v, Version: r.version, Err: r.err})
	})
}

// Close stops following the node; no listener is called after it returns, unless
// Close is called by a listener. The node stays, as Curator leaves it.
func (f *follower[T]) Close(ctx context.Context) error {
	f.state.Close()
	f.listeners.Stop()
	f.mu.Lock()
	ca := f.ca
	f.ca = nil
	f.mu.Unlock()
	if ca != nil {
		return ca.Close(ctx)
	}
	return nil
}

// writable returns nil once started and not closed.
func (f *follower[T]) writable() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.state.State() == lifecycle.Closed:
		return ErrClosed
	case f.ca == nil: // before Start, or while it makes the node
		return ErrNotStarted
	}
	return nil
}

// set writes data whatever the node holds, in one request never sent twice.
func (f *follower[T]) set(ctx context.Context, data []byte) (err error) {
	call := f.tel.recipe.Call(ctx, opSet, f.path)
	defer func() { call.End(f.tel.writes, outcome(false, err), err) }()
	if err := f.writable(); err != nil {
		return err
	}
	stat, err := f.node.Once(ctx, data, -1)
	switch {
	case err == nil:
		f.mu.Lock()
		f.update(data, *stat)
		f.mu.Unlock()
		return nil
	case nodewrite.MaybeApplied(err):
		return fmt.Errorf("%w: set %s: %w", ErrUnknownOutcome, f.path, err)
	}
	return fmt.Errorf("shared: set %s: %w", f.path, err)
}

// trySet writes data if the node is still at prev's version. A lost reply is
// resent; a refusal after it counts as "someone else wrote first" only when a read
// proves it.
func (f *follower[T]) trySet(ctx context.Context, version int32, data []byte) (ok bool, err error) {
	call := f.tel.recipe.Call(ctx, opTrySet, f.path)
	defer func() { call.End(f.tel.writes, outcome(!ok, err), err) }()
	if err := f.writable(); err != nil {
		return false, err
	}
	if version == -1 {
		// -1 would match any version; the node's version wraps to it after 2^31
		// writes (Curator's IllegalTrySetVersionException).
		return false, fmt.Errorf("%w: version -1 matches any version, so it cannot be tried against", ErrInvalid)
	}
	f.mu.Lock()
	before := f.stat // its czxid, if the version tried is the one we hold
	f.mu.Unlock()
	stat, resent, err := f.node.Conditional(ctx, data, version)
	switch {
	case err == nil:
		f.mu.Lock()
		f.update(data, *stat)
		f.mu.Unlock()
		return true, nil
	case !resent && errors.Is(err, framework.ErrBadVersion):
		return false, nil
	case resent && errors.Is(err, framework.ErrBadVersion) && before.Version == version:
		now, nowStat, rerr := f.client.Get(ctx, f.path)
		if rerr == nil && nodewrite.TookVersion(&before, nowStat, now, data) {
			return false, nil
		}
	}
	if resent || nodewrite.MaybeApplied(err) {
		return false, fmt.Errorf("%w: try set %s at version %d: %w", ErrUnknownOutcome, f.path, version, err)
	}
	return false, fmt.Errorf("shared: try set %s: %w", f.path, err)
}
