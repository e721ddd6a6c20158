package shared

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/cache"
	"github.com/zkrecipes/zkrecipes/recipes/internal/args"
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

	mu        sync.Mutex
	state     state
	ca        *cache.Cache
	data      []byte  // the current value's data, never changed in place
	stat      zk.Stat // its stat: Version, and Mzxid to order values by
	delivered int64   // the Mzxid of the last value the listeners heard
	listeners map[int]func(Versioned[T])
	nextID    int

	tel telemetry
}

type state int

const (
	latent state = iota
	starting
	started
	closed
)

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
		decode: decode, data: seed, stat: zk.Stat{Version: -1}, listeners: map[int]func(Versioned[T]){}, tel: newTelemetry(c, recipe)}, nil
}

// Start creates the node with the seed if it does not exist (with container
// parents), and returns once the node's value is loaded. If ctx ends first, Start
// returns its error: before the node was created nothing goes on and Start may be
// called again; after it, the value goes on loading in the background (Close stops
// it). A second Start returns ErrStarted; Start after Close, ErrClosed.
func (f *follower[T]) Start(ctx context.Context) error {
	f.mu.Lock()
	switch f.state {
	case closed:
		f.mu.Unlock()
		return ErrClosed
	case starting, started:
		f.mu.Unlock()
		return ErrStarted
	}
	f.state = starting
	f.mu.Unlock()

	_, err := f.client.Create(ctx, f.path, f.seed, framework.CreatingParentContainers())
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		f.setState(latent)
		return fmt.Errorf("shared: start %s: %w", f.path, err)
	}
	ca, err := cache.New(f.client, f.path, cache.Depth(0))
	if err != nil {
		f.setState(latent)
		return fmt.Errorf("shared: start %s: %w", f.path, err)
	}
	ca.Listen(f.heard)
	f.mu.Lock()
	if f.state == closed { // Close came meanwhile
		f.mu.Unlock()
		_ = ca.Close()
		return ErrClosed
	}
	f.ca, f.state = ca, started
	f.mu.Unlock()
	if err := ca.Start(ctx); err != nil {
		return fmt.Errorf("shared: start %s: %w", f.path, err)
	}
	if n, ok := ca.Get(f.path); ok {
		if _, err := f.decode(n.Data); err != nil {
			_ = f.Close()
			return fmt.Errorf("shared: start %s: %w", f.path, err)
		}
	}
	return nil
}

func (f *follower[T]) setState(s state) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.state != closed {
		f.state = s
	}
}

// heard takes a value the cache read: newer values (by Mzxid, the order in which the
// server wrote them) become the current one, and the listeners hear each value newer
// than the last they heard. Data that is not a T is skipped.
func (f *follower[T]) heard(ev cache.Event) {
	if (ev.Type != cache.Created && ev.Type != cache.Changed) || ev.Path != f.path {
		return
	}
	if _, err := f.decode(ev.New.Data); err != nil {
		f.client.Logger().Warn("zkrecipes: shared value skipped", "path", f.path, "error", err)
		return
	}
	f.mu.Lock()
	f.update(ev.New.Data, ev.New.Stat)
	if ev.New.Stat.Mzxid <= f.delivered || f.state == closed {
		f.mu.Unlock()
		return
	}
	f.delivered = ev.New.Stat.Mzxid
	fns := make([]func(Versioned[T]), 0, len(f.listeners))
	for _, fn := range f.listeners {
		fns = append(fns, fn)
	}
	f.mu.Unlock()
	for _, fn := range fns {
		f.mu.Lock()
		gone := f.state == closed // a listener closed it
		f.mu.Unlock()
		if gone {
			return
		}
		v, _ := f.decode(ev.New.Data)
		fn(Versioned[T]{Value: v, Version: ev.New.Stat.Version})
	}
}

// update makes data the current value if it is newer; f.mu is held.
func (f *follower[T]) update(data []byte, stat zk.Stat) {
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
	f.mu.Lock()
	defer f.mu.Unlock()
	if fn == nil || f.state == closed {
		return func() {}
	}
	id := f.nextID
	f.nextID++
	f.listeners[id] = fn
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.listeners, id)
	}
}

// Close stops following the node; no listener is called after it returns. The node
// stays, as Curator leaves it.
func (f *follower[T]) Close() error {
	f.mu.Lock()
	ca := f.ca
	f.state, f.ca = closed, nil
	clear(f.listeners)
	f.mu.Unlock()
	if ca != nil {
		return ca.Close()
	}
	return nil
}

// writable returns nil once started and not closed.
func (f *follower[T]) writable() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch f.state {
	case closed:
		return ErrClosed
	case started:
		return nil
	}
	return ErrNotStarted
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
	case !resent && errors.Is(err, zk.ErrBadVersion):
		return false, nil
	case resent && errors.Is(err, zk.ErrBadVersion) && before.Version == version:
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
