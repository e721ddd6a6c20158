package shared

import (
	"context"

	"github.com/zkrecipes/zkrecipes/framework"
)

// Value is a byte string shared by every client of one node: Curator's SharedValue.
// It is safe for concurrent use.
type Value struct{ f *follower[[]byte] }

// NewValue makes a shared value at path, whose node Start creates with seed if it
// does not exist. Nothing is sent to ZooKeeper until Start.
func NewValue(c *framework.Client, path string, seed []byte) (*Value, error) {
	f, err := newFollower(c, "shared_value", path, seed, func(b []byte) ([]byte, error) { return append([]byte{}, b...), nil })
	if err != nil {
		return nil, err
	}
	return &Value{f}, nil
}

// Start creates the node with the seed if it does not exist (with container
// parents), and returns once its value is loaded; the value then follows the node.
// If ctx ends first, Start returns its error: before the node was created nothing
// goes on and Start may be called again; after, the value goes on loading in the
// background (Close stops it). A second Start returns ErrStarted; Start after Close,
// ErrClosed.
func (v *Value) Start(ctx context.Context) error { return v.f.Start(ctx) }

// Close stops following the node; no listener is called after it returns. The node
// stays, as Curator leaves it. ctx bounds the wait for the reads under way (see
// cache.Cache.Close). A second Close returns nil.
func (v *Value) Close(ctx context.Context) error { return v.f.Close(ctx) }

// Get returns the current value and its version: the newest this client has read
// or written (the seed, at version -1, before Start has loaded the node). The bytes
// are the caller's.
func (v *Value) Get() Versioned[[]byte] { return v.f.Get() }

// Listen registers fn to hear every new value after this call, in the order the
// server wrote them, on one goroutine, never two calls at once: each one newer than
// the last heard, so versions never go back (unless the node is deleted and made
// again, which starts its version at 0). A value overtaken before it was read is not
// heard, but the last one always is, whoever set it. Register before Start to hear
// the first value. fn must not block for long: later values wait for it. stop
// unregisters fn.
func (v *Value) Listen(fn func(Versioned[[]byte])) (stop func()) { return v.f.Listen(fn) }

// Set writes data whatever the node holds, in one request (Curator's setValue).
// Get returns it at once; listeners hear it when the node's watch reports it. It is
// never sent twice: when the connection drops after it was sent, Set returns an
// error wrapping ErrUnknownOutcome (and ctx's error, if ctx ended while it was in
// flight). Before Start it returns ErrNotStarted; after Close, ErrClosed.
func (v *Value) Set(ctx context.Context, data []byte) error {
	return v.f.set(ctx, append([]byte(nil), data...))
}

// TrySet writes data if the node is still at prev's version (Curator's trySetValue),
// and reports whether it did: false means another write came first and nothing was
// changed. A write whose reply was lost is sent again (both are conditional on the
// same version, so at most one applies); when that is refused, false is returned only
// if a read proves another writer took the version, else an error wrapping
// ErrUnknownOutcome. A prev of version -1 (the seed, or a version wrapped after 2^31
// writes) is refused with ErrInvalid.
func (v *Value) TrySet(ctx context.Context, prev Versioned[[]byte], data []byte) (bool, error) {
	return v.f.trySet(ctx, prev.Version, append([]byte(nil), data...))
}
