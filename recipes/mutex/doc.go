// Package mutex is a reentrant, fair, distributed lock on ZooKeeper: Apache Curator's
// InterProcessMutex for Go, sharing its node layout, so Go and Java processes can
// lock the same path.
//
// Each Mutex value is one participant. Acquire queues it (a protected
// ephemeral-sequential node, _c_<uuid>-lock-<seq>, under the lock's path) and waits
// until every earlier participant has released; each waiter watches only the node
// just before its own, so a release wakes exactly one waiter. Acquiring again while
// held counts up, and the lock is released when Release has been called as often.
// Goroutines that must exclude each other use separate values.
//
// A lock is only as good as the session behind it. Lost closes when the client's
// error policy says the session may be gone (by default already on Suspended), so a
// holder can stop before another process takes over; FencingToken gives a zxid that
// grows with every holder, for stores that can refuse a stale writer (within one
// ensemble's history: a rebuilt ensemble starts tokens again lower, and the client
// says so with framework.Rebuilt, for the store's fence to be reset). Context gives
// a context that ends with the hold, and Do does the whole pattern in one call:
// acquire, run a function under that context, release even if it panics. Acquire
// never grants the lock on a node of an earlier session (Curator's CURATOR-604), and
// a cancelled or failed Acquire leaves no node behind.
//
// ACLs: our node and the lock's container parents get the client's ACL
// (framework.WithACL). A client that ACL refuses can neither queue nor delete a
// holder's node: its Acquire fails at once with an error that wraps
// framework.ErrNoAuth.
package mutex
