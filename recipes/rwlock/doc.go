// Package rwlock is a distributed read/write lock on ZooKeeper, after Apache Curator's
// InterProcessReadWriteLock: any number of readers, or one writer.
//
// Readers and writers queue together under the lock's path, as protected
// ephemeral-sequential nodes (_c_<uuid>-read-<seq> and _c_<uuid>-write-<seq>, or
// Curator's own __READ__ and __WRIT__ names with WithCuratorNames, so that Java
// processes can share the lock). The queue is fair: a writer holds when it is first,
// a reader when no writer is before it, so a reader that comes after a waiting
// writer waits for it and writers never starve. A writer watches the node just
// before it, a reader the nearest writer before it: a release wakes only those it
// lets in.
//
// Each side is reentrant per RWLock. The write lock's holder may take the read lock
// at once (a downgrade: the read node stands in the write node's place, so writers
// queued behind stay blocked when the write lock is released); asking for the write
// lock while holding the read lock returns ErrUpgrade instead of waiting forever.
// Everything the mutex promises holds here too: Lost, fencing tokens, Context and
// Do, no node left by
// a failure or a cancellation, no hold granted on a node of an earlier session, and
// the client's ACL on every node and container parent, so that a client the ACL
// refuses gets an error wrapping framework.ErrNoAuth from Acquire at once.
package rwlock
