// Package semaphore is a distributed counting semaphore on ZooKeeper and the
// non-reentrant mutex built on it: Apache Curator's InterProcessSemaphoreV2 and
// InterProcessSemaphoreMutex for Go, sharing their node layout, so Go and Java
// processes can share the same leases.
//
// A Semaphore at path P grants up to maxLeases leases at a time. Each lease is a
// protected ephemeral-sequential node, P/leases/_c_<uuid>-lease-<seq>, holding the
// participant's id. A lease is held while the number of lease nodes, ours included,
// is at most maxLeases. Acquirers that must wait queue first on an internal lock,
// P/locks/_c_<uuid>-lock-<seq> (a plain mutex): only the holder of that lock watches
// P/leases. A release therefore wakes one waiter, not all of them, and waiters are
// served in the order they came. The lock gives fairness and quiet, not safety. The
// count alone keeps holders within maxLeases, which is why TryAcquire can skip the
// lock.
//
// Every participant must use the same maxLeases for a path; as in Curator, nothing
// checks that.
//
// A lease lasts until it is released or its session ends. Lost closes when the
// client's error policy says the session may be gone (by default already on
// Suspended). FencingToken gives a zxid that grows from one lease to the next, for
// stores that can refuse a stale writer (within one ensemble's history: see
// framework.Rebuilt). A lease is never granted on a node of an
// earlier session (Curator's CURATOR-604). A failed or cancelled acquisition leaves
// no node behind (CURATOR-315, CURATOR-462).
//
// Each Lease has Lost, FencingToken and Context, a context that ends with the
// lease; Semaphore.Do acquires n leases, runs a function with them under a context
// that ends if any is lost, and releases them, even if the function panics.
//
// Mutex is a semaphore with one lease. Unlike mutex.Mutex it is not reentrant:
// acquiring a Mutex that is already held waits like any other participant. Any
// goroutine may release it.
//
// ACLs: every node, P, P/locks and P/leases included, gets the client's ACL
// (framework.WithACL). A client that ACL refuses can neither take a lease nor
// delete one: Acquire and TryAcquire fail at once with an error that wraps
// framework.ErrNoAuth.
//
// Metrics and traces (see framework.WithMeterProvider): an Acquire or TryAcquire of
// n leases is one acquisition, of recipe "semaphore" ("semaphore.mutex" for a Mutex),
// and each lease taken is one hold; the internal lock is not measured apart.
package semaphore
