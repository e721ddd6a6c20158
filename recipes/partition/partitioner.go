package partition

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/cache"
	"github.com/zkrecipes/zkrecipes/recipes/group"
	"github.com/zkrecipes/zkrecipes/recipes/internal/attempt"
	"github.com/zkrecipes/zkrecipes/recipes/internal/lifecycle"
	"github.com/zkrecipes/zkrecipes/recipes/mutex"
)

// Item is an item whose work runs here.
type Item struct {
	Name         string
	FencingToken int64 // grows with every owner of this item
}

// Partitioner is this process's membership of a partitioned set: it runs work for
// the items it owns.
type Partitioner struct {
	c    *framework.Client
	path string
	work func(ctx context.Context, it Item) error
	o    options

	member *group.Member // path/members/<id>, its payload the items whose lock it holds
	source *cache.Cache  // ItemsFrom's path, or nil

	wake chan struct{}
	tel  *telemetry

	state lifecycle.Lifecycle

	// The payload's writes: changes counts the changes of what we hold, published the
	// last change a finished write covers.
	changes   atomic.Uint64
	publishMu sync.Mutex
	published uint64

	mu      sync.Mutex
	runs    map[string]*run         // an item we own or are acquiring, until its goroutine ends
	stop    context.CancelFunc      // ends the reconciling loop
	stopped chan struct{}           // closed when the loop has ended
	endRuns context.CancelCauseFunc // ends every run
}

// run is one item's goroutine: it acquires the item's lock, runs work while it
// holds it, and releases it once work has returned.
// errMoving is the cause of a work's ctx that ends because its item is moving to
// another member or has left the set.
var errMoving = errors.New("partition: the item is moving to another member, or has left the set")

type run struct {
	cancel context.CancelCauseFunc // the item is moving, gone, or we are closing
	done   chan struct{}

	mu   sync.Mutex
	held bool
}

func (r *run) setHeld(h bool) {
	r.mu.Lock()
	r.held = h
	r.mu.Unlock()
}

func (r *run) isHeld() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.held
}

// New makes this process a member of the partitioned set at path. work runs, on a
// goroutine of its own, for each item this member owns; its ctx ends when the item
// may be lost or is moving to another member, and the item is handed over once
// work has returned. Options: WithID(id) (default host:pid); Items(names ...string),
// a fixed set; ItemsFrom(path), the children of another path, followed as they come
// and go (one of the two is required); WithRestartPause. Nothing is sent to
// ZooKeeper until Start.
func New(c *framework.Client, path string, work func(ctx context.Context, it Item) error, opts ...Option) (*Partitioner, error) {
	o, err := newOptions(c, path, opts)
	if err != nil {
		return nil, err
	}
	if work == nil {
		return nil, fmt.Errorf("%w: nil work", ErrInvalid)
	}
	p := &Partitioner{c: c, path: path, work: work, o: o, wake: make(chan struct{}, 1), runs: map[string]*run{}, tel: newTelemetry(c)}
	if p.member, err = group.New(c, p.membersPath(), o.id, nil); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if o.itemsFrom != "" {
		if p.source, err = cache.New(c, o.itemsFrom, cache.Depth(1), cache.WithoutData()); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
	}
	return p, nil
}

func (p *Partitioner) membersPath() string { return path.Join(p.path, "members") }
func (p *Partitioner) itemsPath() string   { return path.Join(p.path, "items") }

// Start joins the set and returns once this member is in the group and its views
// (members, items, owners) are loaded, without waiting for items: their work
// starts in the background as they come to this member. If ctx ends first, Start
// returns an error wrapping ctx's and leaves nothing behind. Another live member
// under our id makes it fail with an error wrapping group.ErrDuplicateID. Started
// before its client's first session, Start waits for one as the client's operations
// do: one connection timeout at most, unless the client was made
// WithRetryBeforeFirstConnection; when none comes in time, it returns an error
// wrapping the client's *framework.ConnectError (and framework.ErrNoServer). A
// failed Start closes the Partitioner: make a new one to try again.
func (p *Partitioner) Start(ctx context.Context) error {
	if err := p.state.Start(ErrStarted, ErrClosed); err != nil {
		return err
	}

	poke := func() {
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
	var stops []func()
	stops = append(stops, p.member.Listen(func(map[string][]byte) { poke() }))
	if p.source != nil {
		stops = append(stops, p.source.Listen(func(cache.Event) { poke() }))
	}
	var err error
	if p.source != nil {
		err = p.source.Start(ctx)
	}
	if err == nil {
		err = p.member.Start(ctx)
	}
	if err != nil {
		for _, stop := range stops {
			stop()
		}
		_ = p.closeViews(ctx)
		p.state.Close()
		return fmt.Errorf("partition: starting %s: %w", p.path, err)
	}

	loopCtx, stop := context.WithCancel(context.Background())
	// A closed client ends every work, its cause saying so; Close ends them with ErrClosed.
	runsCtx, endRuns := context.WithCancelCause(p.c.ForRecipes().Context())
	p.mu.Lock()
	p.stop, p.stopped, p.endRuns = stop, make(chan struct{}), endRuns
	p.mu.Unlock()
	go func() {
		defer close(p.stopped)
		defer func() {
			for _, stop := range stops {
				stop()
			}
		}()
		for {
			p.reconcile(runsCtx, poke)
			select {
			case <-p.wake:
			case <-loopCtx.Done():
				return
			case <-p.c.ForRecipes().Context().Done():
				return // a closed client: nothing can be owned any more
			}
		}
	}()
	return nil
}

// reconcile starts the runs of the items assigned to us that have none (their
// contexts derived from ctx), and ends those of the items that are not ours any
// more.
func (p *Partitioner) reconcile(ctx context.Context, poke func()) {
	items := p.items()
	group := p.member.Members()
	members := slices.Collect(maps.Keys(group))
	owners := p.owners(group, items)
	p.mu.Lock()
	defer p.mu.Unlock()
	// The locks we hold we know first-hand, not from our payload as the group's copy
	// shows it, which may lag behind them.
	for name, r := range p.runs {
		if r.isHeld() {
			owners[name] = p.o.id
		}
	}
	target := Assign(items, members, owners)
	for name, r := range p.runs {
		if target[name] != p.o.id {
			r.cancel(errMoving)
		}
	}
	for name, owner := range target {
		if owner != p.o.id || p.runs[name] != nil {
			continue
		}
		runCtx, cancel := context.WithCancelCause(ctx)
		r := &run{cancel: cancel, done: make(chan struct{})}
		p.runs[name] = r
		go func() {
			defer func() {
				cancel(nil)
				p.mu.Lock()
				delete(p.runs, name)
				p.mu.Unlock()
				close(r.done)
				poke() // the item may be ours again
			}()
			p.runItem(runCtx, name, r)
		}()
	}
}

// items is the set shared now.
func (p *Partitioner) items() []string {
	if p.source == nil {
		return p.o.items
	}
	return p.source.Children(p.o.itemsFrom)
}

// owners maps each item to the other member whose payload says it holds the item's
// lock (ours are added first-hand by the caller). Following the group alone, a
// member watches the members' nodes, not every item's lock. A holder writes its
// payload without the item before it releases the lock, so two members list one
// item only when a lock was lost under its holder; then the first in id order is
// taken, the same everywhere, and the locks decide who runs it.
func (p *Partitioner) owners(group map[string][]byte, items []string) map[string]string {
	shared := make(map[string]bool, len(items))
	for _, name := range items {
		shared[name] = true
	}
	owners := make(map[string]string, len(items))
	for _, id := range slices.Sorted(maps.Keys(group)) {
		if id == p.o.id {
			continue
		}
		for _, name := range parsePayload(group[id]) {
			if _, taken := owners[name]; shared[name] && !taken {
				owners[name] = id
			}
		}
	}
	return owners
}

// publish writes the items whose lock we hold into our member node's payload, one
// name a line (item names are node names: they hold no newline), and returns once a
// write made after the caller's change of what we hold is done. Changes that come
// while a write is under way are covered by the next one: a burst of acquisitions
// costs a write per round trip, not one each.
func (p *Partitioner) publish(ctx context.Context) error {
	change := p.changes.Add(1)
	p.publishMu.Lock()
	defer p.publishMu.Unlock()
	if p.published >= change {
		return nil
	}
	covered := p.changes.Load()
	if err := p.member.SetPayload(ctx, formatPayload(p.Owned())); err != nil {
		return err
	}
	p.published = covered
	return nil
}

func formatPayload(items []string) []byte { return []byte(strings.Join(items, "\n")) }

func parsePayload(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	return strings.Split(string(b), "\n")
}

// runItem takes the item's lock and runs work while it holds it, until ctx ends (the
// item is moving or gone, or we are closing); a lock lost on the way is taken
// again.
func (p *Partitioner) runItem(ctx context.Context, name string, r *run) {
	log := p.c.ForRecipes().Logger().With("partition", p.path, "item", name, "member", p.o.id)
	m, err := mutex.New(p.c, path.Join(p.itemsPath(), name), mutex.WithID(p.o.id))
	if err != nil { // the names were checked: New cannot refuse them
		log.Error("zkrecipes: partition: cannot make the item's lock", "error", err)
		return
	}
	pauses := &attempt.Pauses{Client: p.c}
	for ctx.Err() == nil {
		if err := m.Acquire(ctx); err != nil {
			if ctx.Err() != nil || errors.Is(err, framework.ErrClosed) {
				return
			}
			log.Warn("zkrecipes: partition: acquiring the item's lock; will retry", "error", err)
			pauses.Wait(ctx, nil)
			continue
		}
		pauses.Reset()
		p.tel.acquired()
		r.setHeld(true)
		// The others learn who owns what from the payloads, before the work starts.
		if err := p.publish(ctx); err != nil && ctx.Err() == nil {
			log.Debug("zkrecipes: partition: publishing the items held", "error", err)
		}
		p.hold(ctx, m, name, log)
		r.setHeld(false)
		// Unlisted before released, so that the next owner's payload and ours never
		// both list the item (a member that has left has no payload to write).
		unlist, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		if err := p.publish(unlist); err != nil && !errors.Is(err, group.ErrClosed) {
			log.Debug("zkrecipes: partition: publishing the items held", "error", err)
		}
		cancel()
		release, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		err := m.Release(release)
		cancel()
		p.tel.released(err)
		if err != nil && !errors.Is(err, mutex.ErrLost) {
			log.Warn("zkrecipes: partition: releasing the item's lock", "error", err)
		}
	}
}

// hold runs work while m is held: it returns once work has returned after ctx ended
// or the lock was lost. Work that returns while the item is still ours runs again
// after the restart pause.
func (p *Partitioner) hold(ctx context.Context, m *mutex.Mutex, name string, log *slog.Logger) {
	// A lock that may be lost ends the work at once, its cause wrapping mutex.ErrLost.
	// A closed client ends ctx before it loses the lock, so the cause then says
	// framework.ErrClosed.
	workCtx, cancel := m.Context(ctx)
	defer cancel()
	it := Item{Name: name, FencingToken: m.FencingToken()}
	for {
		err := p.work(workCtx, it)
		if workCtx.Err() != nil {
			return
		}
		if err != nil {
			log.Warn("zkrecipes: partition: work returned an error while the item is ours; running it again after the pause", "error", err, "pause", p.o.pause)
		} else {
			log.Info("zkrecipes: partition: work returned while the item is ours; running it again after the pause", "pause", p.o.pause)
		}
		select {
		case <-time.After(p.o.pause):
		case <-workCtx.Done():
			return
		}
	}
}

// Owned lists, sorted, the items whose lock this member holds and whose work runs
// here now (or is about to run again after returning).
func (p *Partitioner) Owned() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var owned []string
	for name, r := range p.runs {
		if r.isHeld() {
			owned = append(owned, name)
		}
	}
	slices.Sort(owned)
	return owned
}

// ID is this member's id.
func (p *Partitioner) ID() string { return p.o.id }

// Close leaves the set: it leaves the group (so the others take our items at once),
// ends every work's ctx, and releases each item once its work has returned. It
// returns once all is done, or when ctx ends first: then with an error wrapping
// ctx's, and the items whose work has not returned yet are released in the
// background when it does. A second Close returns nil.
func (p *Partitioner) Close(ctx context.Context) error {
	p.mu.Lock()
	if p.state.Close() == lifecycle.Closed {
		p.mu.Unlock()
		return nil
	}
	stop, stopped, endRuns := p.stop, p.stopped, p.endRuns
	p.mu.Unlock()
	if stop == nil { // never started
		return p.closeViews(ctx)
	}
	stop()
	<-stopped // no new runs from here on
	// Leave first, so that the others queue for our items while our works end.
	err := p.member.Close(ctx)
	endRuns(ErrClosed)
	p.mu.Lock()
	runs := slices.Collect(maps.Values(p.runs))
	p.mu.Unlock()
	for _, r := range runs {
		select {
		case <-r.done:
		case <-ctx.Done():
			err = errors.Join(err, fmt.Errorf("partition: closing %s: work still running, its item is released when it returns: %w", p.path, ctx.Err()))
		}
		if ctx.Err() != nil {
			break
		}
	}
	return errors.Join(err, p.closeViews(ctx))
}

// closeViews closes the group membership and the caches.
func (p *Partitioner) closeViews(ctx context.Context) error {
	err := p.member.Close(ctx)
	if p.source != nil {
		err = errors.Join(err, p.source.Close(ctx))
	}
	return err
}

// Done is closed when this member stops following the set: its client closed (every
// work's ctx ends then, its context.Cause wrapping framework.ErrClosed), Close, or a
// failed Start. Err says which.
func (p *Partitioner) Done() <-chan struct{} { return p.member.Done() }

// Err is nil until Done is closed; then an error wrapping framework.ErrClosed if the
// client closed, else ErrClosed.
func (p *Partitioner) Err() error {
	err := p.member.Err()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, framework.ErrClosed):
		return fmt.Errorf("partition: %s: %w", p.path, err)
	}
	return ErrClosed
}
