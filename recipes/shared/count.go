package shared

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/zkrecipes/zkrecipes/framework"
)

// Count is a 32-bit integer shared by every client of one node: Curator's
// SharedCount, a 4-byte big-endian int in the node. It is safe for concurrent use.
type Count struct{ f *follower[int32] }

// NewCount makes a shared count at path, whose node Start creates with seed if it
// does not exist. Nothing is sent to ZooKeeper until Start.
func NewCount(c *framework.Client, path string, seed int32) (*Count, error) {
	f, err := newFollower(c, "shared_count", path, countBytes(seed), countOf)
	if err != nil {
		return nil, err
	}
	return &Count{f}, nil
}

func countBytes(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }

func countOf(data []byte) (int32, error) {
	if len(data) != 4 {
		return 0, fmt.Errorf("%w: %d bytes", ErrBadData, len(data))
	}
	return int32(binary.BigEndian.Uint32(data)), nil
}

// Start is Value's Start; a node that does not hold 4 bytes makes it return an error
// wrapping ErrBadData, and closes the Count. Later writes of other than 4 bytes by
// others are not heard (they are logged).
func (c *Count) Start(ctx context.Context) error { return c.f.Start(ctx) }

// Close is Value's Close.
func (c *Count) Close(ctx context.Context) error { return c.f.Close(ctx) }

// Get is Value's Get: the seed at version -1 before Start has loaded the node.
func (c *Count) Get() Versioned[int32] { return c.f.Get() }

// Listen is Value's Listen.
func (c *Count) Listen(fn func(Versioned[int32])) (stop func()) { return c.f.Listen(fn) }

// Set is Value's Set.
func (c *Count) Set(ctx context.Context, v int32) error { return c.f.set(ctx, countBytes(v)) }

// TrySet is Value's TrySet (Curator's trySetCount).
func (c *Count) TrySet(ctx context.Context, prev Versioned[int32], v int32) (bool, error) {
	return c.f.trySet(ctx, prev.Version, countBytes(v))
}
