package discovery

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/zkrecipes/zkrecipes/recipes/internal/lifecycle"
	"github.com/zkrecipes/zkrecipes/recipes/nodes"
)

// Registration is one instance this process registered: its node is kept in place
// through faults until Close.
type Registration struct {
	node    *nodes.PersistentNode
	writing sync.Mutex // one Update at a time, so the last to set in is the last written

	mu    sync.Mutex
	in    Instance
	state lifecycle.Lifecycle // Closed by Close
}

// Register writes the instance at basePath/<name>/<id> (a Registered left zero is
// now) and returns once it is there. The node's kind follows in.Type: Dynamic an
// ephemeral node, DynamicSequential an ephemeral sequential one (Curator's protected
// name), Static and Permanent a persistent one; parents are containers.
//
// The node is a nodes.PersistentNode: after a session loss it is made again under
// the new session, with the latest Update's data, as soon as the client reconnects;
// a reconnect within the same session sends nothing (Curator deletes and re-creates
// the node on every reconnect). A node of another live session at the path is left
// alone and Register fails with ErrIDTaken (Curator would delete it). Bad input
// fails with ErrInvalid and writes nothing. If ctx ends first, Register returns its
// error and leaves no node behind. Before the client's first session, Register waits
// for one as the client's operations do: one connection timeout at most, unless the
// client was made WithRetryBeforeFirstConnection; when none comes in time, it
// returns an error wrapping the client's *framework.ConnectError (and
// framework.ErrNoServer), having written nothing, and may be called again.
func (d *Discovery) Register(ctx context.Context, in Instance) (*Registration, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	if in.Registered.IsZero() {
		in.Registered = time.Now().UTC().Truncate(time.Millisecond)
	}
	data, err := in.marshal()
	if err != nil {
		return nil, err
	}
	var kind []nodes.Option
	switch in.Type {
	case Dynamic:
		kind = []nodes.Option{nodes.Ephemeral()}
	case DynamicSequential:
		kind = []nodes.Option{nodes.Ephemeral(), nodes.Protected(), nodes.Sequential()}
	default:
		kind = []nodes.Option{nodes.Persistent()}
	}
	p := d.instancePath(in.Name, in.ID)
	node, err := nodes.New(d.c, p, data, kind...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := node.Start(ctx); err != nil {
		if errors.Is(err, nodes.ErrNodeExists) {
			err = fmt.Errorf("%w: %w", ErrIDTaken, err)
		}
		return nil, fmt.Errorf("discovery: register %s: %w", p, err)
	}
	return &Registration{node: node, in: in}, nil
}

// Instance is the instance as last registered or updated.
func (r *Registration) Instance() Instance {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.in
}

// Path is the instance's node (for DynamicSequential, the name the server gave it).
func (r *Registration) Path() string { return r.node.Path() }

// Update replaces the registered instance's data with in, which must have the same
// name, id and type (a Registered left zero keeps the registration's). It returns
// once the node holds it; if ctx ends first, Update returns its error and the data
// is written once the node can be reached. Bad input fails with ErrInvalid and
// writes nothing.
func (r *Registration) Update(ctx context.Context, in Instance) error {
	if err := in.check(); err != nil {
		return err
	}
	r.writing.Lock()
	defer r.writing.Unlock()
	r.mu.Lock()
	old, closed := r.in, r.state.State() == lifecycle.Closed
	r.mu.Unlock()
	switch {
	case closed:
		return ErrClosed
	case in.Name != old.Name || in.ID != old.ID:
		return fmt.Errorf("%w: Update of %s/%s, registered as %s/%s", ErrInvalid, in.Name, in.ID, old.Name, old.ID)
	case in.Type != old.Type:
		return fmt.Errorf("%w: Update to type %v of an instance registered as %v", ErrInvalid, in.Type, old.Type)
	}
	if in.Registered.IsZero() {
		in.Registered = old.Registered
	}
	data, err := in.marshal()
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.in = in
	r.mu.Unlock()
	if err := r.node.SetData(ctx, data); err != nil {
		return fmt.Errorf("discovery: update %s: %w", r.node.Path(), err)
	}
	return nil
}

// Close unregisters the instance: it stops keeping the node and deletes it. Without a
// connection, or once ctx ends, the delete goes on in the background while the node
// may exist (an error wrapping framework.ErrDeleteInBackground says so). A second
// Close returns nil.
func (r *Registration) Close(ctx context.Context) error {
	if r.state.Close() == lifecycle.Closed {
		return nil
	}
	if err := r.node.Close(ctx); err != nil {
		return fmt.Errorf("discovery: unregister %s: %w", r.node.Path(), err)
	}
	return nil
}
