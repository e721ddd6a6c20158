package shared

// Versioned is a value with the version of the node it was read from or written to
// (ZooKeeper's Stat.Version), for TrySet. Version -1 means the value was never read
// from the node: the seed before Start.
type Versioned[T any] struct {
	Value   T
	Version int32
}
