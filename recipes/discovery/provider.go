package discovery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/notify"
	"github.com/zkrecipes/zkrecipes/recipes/cache"
	"github.com/zkrecipes/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/zkrecipes/recipes/internal/lifecycle"
)

// Provider follows one service's instances (Curator's ServiceProvider over its
// ServiceCache) and picks one per call, from memory.
type Provider struct {
	d      *Discovery
	dir    string
	cache  *cache.Cache
	pick   strategy
	filter func(Instance) bool
	downs  *downs
	events *notify.Listeners[Event]

	mu    sync.Mutex
	nodes map[string]*Instance // by node name; an Instance is never changed once here
	// sorted is nodes' instances sorted by id, made again on demand after a change
	// (nil), so that a provider loading a large service sorts once, not per node.
	sorted []*Instance
	state  lifecycle.Lifecycle // moved under mu, with mute
	mute   chan struct{}       // closed to stop delivering events
}

// NewProvider makes a provider of the named service. Nothing is sent to ZooKeeper
// until Start.
func (d *Discovery) NewProvider(name string, opts ...ProviderOption) (*Provider, error) {
	if err := args.CheckName(name); err != nil {
		return nil, fmt.Errorf("%w: name: %w", ErrInvalid, err)
	}
	o := defaultProviderOptions()
	if err := args.Apply(&o, opts); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	dir := d.servicePath(name)
	c, err := cache.New(d.c, dir, cache.Depth(1))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	p := &Provider{
		d: d, dir: dir, cache: c,
		pick: o.strategy(), filter: o.filter, downs: newDowns(o.errors, o.forget),
		events: notify.New[Event](), nodes: map[string]*Instance{},
	}
	c.Listen(p.hear) // first, so the copy is ours before Start returns
	return p, nil
}

// Start loads the service's instances and returns once the first complete list is
// in (a service that does not exist yet has none, and is followed from its
// creation). From then on the list follows the server until Close: each change
// costs one notification and one read, and after a session loss the provider reads
// everything again and reports only the differences. If ctx ends first, Start
// returns its error and the loading goes on in the background (Close stops it). A
// second Start returns ErrStarted; Start after Close, ErrClosed.
//
// Started before its client's first session, Start waits for one as the client's
// operations do (cache.Cache.Start): one connection timeout at most, unless the
// client was made WithRetryBeforeFirstConnection. When none comes in time, Start
// returns an error wrapping the client's *framework.ConnectError (and
// framework.ErrNoServer), and the provider is as before Start: nothing was read or
// told, nothing goes on in the background, and Start may be called again.
func (p *Provider) Start(ctx context.Context) error {
	p.mu.Lock()
	if err := p.state.Start(ErrStarted, ErrClosed); err != nil {
		p.mu.Unlock()
		return err
	}
	p.mute = make(chan struct{})
	go p.events.Run(p.mute)
	p.mu.Unlock()
	if err := p.cache.Start(ctx); err != nil {
		if ce := (*framework.ConnectError)(nil); errors.As(err, &ce) {
			p.unstart()
		}
		return fmt.Errorf("discovery: provider of %s: %w", p.dir, err)
	}
	return nil
}

// unstart undoes Start after the cache's Start gave up waiting for the client's
// first session: the one failure of the cache's Start that leaves it unstarted, and
// the only one that is a *framework.ConnectError (a ctx that ends leaves the cache
// loading, and its error is ctx's). A Close that came meanwhile has stopped the
// events already.
func (p *Provider) unstart() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.state.Unstart() {
		return
	}
	close(p.mute)
	p.mute = nil
}

// Pick returns one usable instance, by the provider's strategy (RoundRobin unless
// set), from memory: it never waits for the network. Disabled instances, those the
// filter refuses and those marked down by NoteError are skipped; ErrNoInstance when
// none is left, ErrClosed after Close. The Payload is shared: read it, never change
// it.
func (p *Provider) Pick() (Instance, error) {
	p.mu.Lock()
	all, st := p.sortedLocked(), p.state.State()
	p.mu.Unlock()
	if st == lifecycle.Closed {
		return Instance{}, ErrClosed
	}
	usable := p.usable(all)
	if len(usable) == 0 {
		return Instance{}, fmt.Errorf("%w: %s has %d instances", ErrNoInstance, p.dir, len(all))
	}
	return *p.pick(usable), nil
}

func (p *Provider) usable(all []*Instance) []*Instance {
	out := make([]*Instance, 0, len(all))
	for _, in := range all {
		if !in.Disabled && (p.filter == nil || p.filter(*in)) && !p.downs.down(in.ID) {
			out = append(out, in)
		}
	}
	return out
}

// sortedLocked is the instances sorted by id. p.mu is held.
func (p *Provider) sortedLocked() []*Instance {
	if p.sorted == nil {
		p.sorted = make([]*Instance, 0, len(p.nodes))
		for _, in := range p.nodes {
			p.sorted = append(p.sorted, in)
		}
		slices.SortFunc(p.sorted, func(a, b *Instance) int { return strings.Compare(a.ID, b.ID) })
	}
	return p.sorted
}

// Instances is every instance now known, sorted by id, disabled ones included. The
// Payloads are shared: read them, never change them.
func (p *Provider) Instances() []Instance {
	p.mu.Lock()
	defer p.mu.Unlock()
	all := make([]Instance, len(p.nodes))
	for i, in := range p.sortedLocked() {
		all[i] = *in
	}
	return all
}

// NoteError says that a call to the instance failed: after DownAfter's count of
// errors Pick skips it for a while (Curator's ServiceProvider.noteError).
func (p *Provider) NoteError(in Instance) { p.downs.note(in.ID) }

// Listen calls fn with each change of the instances and of the connection, in
// order, one call at a time, on a goroutine of the provider's; Instances already
// includes the change when fn hears it. Register before Start to hear the first
// list as Added events. stop ends the calls; it does not wait for one under way.
func (p *Provider) Listen(fn func(Event)) (stop func()) { return p.events.Listen(fn) }

// Close stops following the service: once it has begun, no event is delivered but
// one already under way (Close does not wait for a listener).
// Instances still answers from the last list. ctx bounds the wait for the reads under
// way (see cache.Cache.Close). A second Close returns nil; Close may be called from a
// listener.
func (p *Provider) Close(ctx context.Context) error {
	p.mu.Lock()
	if p.state.Close() == lifecycle.Closed {
		p.mu.Unlock()
		return nil
	}
	mute := p.mute
	p.mu.Unlock()
	err := p.cache.Close(ctx)
	if mute != nil {
		close(mute) // without waiting for a delivery: Close may be called by a listener
	}
	return err
}

// hear turns the cache's events into the provider's, on the cache's delivery
// goroutine.
func (p *Provider) hear(e cache.Event) {
	switch e.Type {
	case cache.Created, cache.Changed:
		if e.Path != p.dir && (e.Type == cache.Created || !bytes.Equal(e.Old.Data, e.New.Data)) {
			p.put(e.Path, e.New.Data) // not when written again as it was: nothing changed
		}
	case cache.Deleted:
		if e.Path != p.dir {
			p.remove(e.Path)
		}
	case cache.Suspended:
		p.events.Push(Event{Type: Suspended})
	case cache.Lost:
		p.events.Push(Event{Type: Lost})
	case cache.Synced:
		p.events.Push(Event{Type: Synced})
	case cache.Error:
		p.events.Push(Event{Type: Error, Path: e.Path, Err: e.Err})
	case cache.Stopped:
		p.events.Push(Event{Type: Stopped, Err: e.Err})
	}
}

func (p *Provider) put(nodePath string, data []byte) {
	in, err := unmarshal(data)
	name := path.Base(nodePath)
	p.mu.Lock()
	old, had := p.nodes[name]
	if err != nil {
		delete(p.nodes, name)
	} else {
		p.nodes[name] = &in
	}
	p.sorted = nil
	p.mu.Unlock()
	switch {
	case err != nil:
		if had {
			p.events.Push(Event{Type: Removed, Old: *old, Path: nodePath})
		}
		p.d.log.Warn("discovery: leaving out a node that is not an instance", "path", nodePath, "err", err)
		p.events.Push(Event{Type: Error, Path: nodePath, Err: fmt.Errorf("%s: %w", nodePath, err)})
	case had:
		p.events.Push(Event{Type: Updated, Old: *old, New: in, Path: nodePath})
	default:
		p.events.Push(Event{Type: Added, New: in, Path: nodePath})
	}
}

func (p *Provider) remove(nodePath string) {
	name := path.Base(nodePath)
	p.mu.Lock()
	old, had := p.nodes[name]
	delete(p.nodes, name)
	p.sorted = nil
	p.mu.Unlock()
	if had {
		p.events.Push(Event{Type: Removed, Old: *old, Path: nodePath})
	}
}
