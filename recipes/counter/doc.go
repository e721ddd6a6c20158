// Package counter is a 64-bit counter shared by processes: Apache Curator's
// DistributedAtomicLong for Go, with its node layout (one persistent node holding
// the value as 8 bytes, big-endian, under container parents), so Go and Java
// processes can add to the same counter.
//
// An Add reads the node and writes the sum back on condition that the node's version
// has not moved; a writer that lost the race reads again and retries, as often as
// the retry policy allows, and with PromotedToLock it then takes Curator's mutex at
// the lock path and tries again under it. Under contention an Add either succeeds or
// returns an error wrapping ErrGaveUp, having written nothing.
//
// An Add costs a read and a write, as Curator's does, unless nobody else writes: a
// Counter remembers the version and value it last read or wrote, and once a read has
// found the node where it left it, it sends the conditional write straight away, one
// request. The version keeps that exact (the write applies only if the node is still
// at the remembered version, so still holds the remembered value); a write refused
// for a stale memory reads and tries again at once, and the Counter stops guessing
// until a read finds the node as it left it again, so contended adds cost what
// Curator's do. The one thing a version cannot tell is a node deleted and made again
// that has come back to the same version: do not delete a counter's node while
// Counters use it (Curator's DistributedAtomicLong has no delete either).
//
// What a lost reply means is where this package parts from Curator. When the
// connection drops after a conditional write was sent, nobody knows whether ZooKeeper
// applied it. Curator's client sends it again; if the first had applied, the second
// is refused for its stale version, and DistributedAtomicValue takes the refusal for
// a lost race, reads the value its own write made, and adds again: one increment,
// counted twice, reported as a success. Here the write is sent again too (both sends
// are conditional on the same version, so at most one applies, and an OK means it
// was this one), but a refusal after a lost reply is taken as proof of a lost race
// only when a read shows it: the same node one version further on, holding a value
// other than ours. Otherwise Add returns an error wrapping ErrUnknownOutcome, and
// the caller, who knows what the count is for, decides. An Add that returns no error
// was applied exactly once, and its Result is the true value before and after it.
//
// Get is a plain ZooKeeper read: it may lag behind another client's finished write,
// never behind this client's own. Set is one unconditional write (Curator's
// forceSet), never sent twice. A node that does not hold 8 bytes is not a counter:
// every call that reads it returns an error wrapping ErrBadData and writes nothing.
package counter
