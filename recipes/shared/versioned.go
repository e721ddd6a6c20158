package shared

// Versioned is a value with the version of the node it was read from or written to
// (ZooKeeper's Stat.Version), for TrySet. Version -1 means the value was never read
// from the node: the seed before Start.
type Versioned[T any] struct {
	Value   T
	Version int32
	// Err is set only in the last value a listener hears when the client closed: the
	// value is no longer followed, and Value and Version are the last known. It wraps
	// framework.ErrClosed.
	Err error
}
