// Package partition shares a set of items (jobs, shards, queues) among the live
// members of a group, each item owned by exactly one member at a time, the share of
// each member balanced, and as few items as possible moved when a member joins or
// leaves.
//
// A Partitioner is one member. It joins the group at path/members/<id> (the group
// recipe's GroupMember), whose payload lists the items it holds, one name a line;
// it follows the members and the items (a fixed set, or the children of another
// path with ItemsFrom). Each item has a lock at path/items/<item> with the mutex's
// node names (Curator's InterProcessMutex's), so `zkr inspect path` shows who owns
// what and a Curator InterProcessMutex on an item's path respects the owner. From
// what it sees it computes who should own each item (Assign), and for every item
// that is its own it runs a goroutine: take the item's lock, write the payload,
// then run work(ctx, item) while holding it.
//
// # What it costs the servers
//
// A member learns who owns what from the members' payloads, not from every item's
// lock: it watches the group (a watch on its children and one on each member's
// node), its own node, the item set's children with ItemsFrom, and the one lock
// node it queues behind for an item of its own that it is taking over: O(members +
// its own items), where following every lock queue cost O(items) per member. With
// 2,000 items over 50 members that was 4,052 watches per member, and 51 now; a
// join's rebalance cost 277 requests per member, and 49 now (BENCHMARKS-scale.md,
// `make bench-scale`). A holder rewrites its payload when what it holds changes, once
// per round trip however many locks it takes at once, and before it releases a lock.
//
// # What it costs the process
//
// Every member runs Assign on every change it sees. Its memory grows as items +
// members (about 160 bytes a name); its time mostly as the pairs it scores, each
// item that needs an owner at each member with room: every pair from nothing, as
// when members start together, only the moving items after a join or a leave. From
// nothing, 5,000 items over 2,000 members took 1.1 MB and 121 ms at best on our
// two shared cores (2,000 × 2,000: 0.7 MB, 52 ms), up to 850 ms with other work on
// them; sorting every pair, as Assign did before, took 1.3 GB and 4 to 6 s. After a
// join, 1 MB and 2 to 9 ms (`go test -bench Assign -benchmem ./recipes/partition/`;
// BENCHMARKS-scale.md, `make bench-scale`).
//
// # The life of an item
//
//   - Exclusive: work runs only while its member holds the item's lock, so two
//     members whose sessions are alive never run one item's work at once, whatever
//     their views of the group. The ctx given to work ends at once when the lock may
//     be lost (its Lost closes: with the default error policy, already when the
//     connection is suspended; its context.Cause then wraps mutex.ErrLost), and when
//     the item moves to another member or leaves the set (Close ends it with a cause
//     wrapping ErrClosed). Item.FencingToken grows with every owner, for stores that
//     can refuse a stale writer (within one ensemble's history: see
//     framework.Rebuilt).
//   - Handed over once work has returned: the lock is released only then. A work
//     that ignores its ctx keeps its item, and nobody takes it until it returns or
//     its member's session ends.
//   - Work that returns while the item is still ours (with an error or not) is
//     logged (through the client's logger, at Warn for an error) and run again
//     after a pause (WithRestartPause, one second by default), with the same token:
//     the item stays owned and is not handed over for it. A hold lost meanwhile is
//     taken again with a new lock node, and a new token.
//   - Complete: an item whose owner is gone has a new one within the session
//     timeout (the old owner's lock node goes with its session) plus the time the
//     old work takes to return; items created or deleted under ItemsFrom start or
//     stop as soon as the change is seen.
//   - Ended by a closed client: every work's ctx ends with a context.Cause wrapping
//     framework.ErrClosed, Done is closed and Err says why; Start on a closed client
//     returns an error wrapping it. Close is still needed to free the rest.
//
// Members that briefly see different groups may each compute that an item is
// theirs: both queue on its lock, one holds it, and the other gives up its place
// once its view catches up. Nothing but the locks decides who runs what.
//
// # Who owns what
//
// Assign decides. Its answer depends on the items, the members and the items'
// current owners, and on nothing else, so members that see the same state agree.
// A member takes the current owners from the other members' payloads, and the locks
// it holds from itself: its own payload as the group's copy shows it may lag behind
// them, and must not move an item of its own that should stay. A payload may lag
// behind its member's locks too; then members briefly disagree, and the locks
// decide, as below.
//
// Why the current owners: no rule of the items and members alone can be balanced to
// the item and move only what it must. Two items over members {a, b} go one to each;
// over {a, b, c} two of the three members get one. If c is the one left without,
// the change {a, c} → {a, b, c} can keep everything in place and yet must move an
// item, and so on for every choice. Measured over 1000 random memberships (1 to 200
// items, 2 to 51 members), rendezvous hashing capped for balance, which is the best
// such rule we tried, moved 1.8× the fewest possible items on a join and 1.7× on a
// leave, 11× on the worst single join (`go test -run TestAssignMovesTheFewest -v
// ./recipes/partition/`). Taking the current owners, Assign keeps every item where
// it is while its owner is a member and within its share, which moves exactly the
// fewest possible (the same test checks it on every change), and places only the
// rest by rendezvous hashing, so that a start from nothing spreads items evenly and
// is the same everywhere.
//
// Every other item keeps running without a pause while a member joins or leaves:
// kazoo's SetPartitioner instead releases every item on every change and allocates
// them all again (its round-robin split also moves most items when a member comes),
// so all work stops whenever one replica joins or leaves.
//
// While a change is under way, items pass from one owner to the next one at a time.
// The shares do not move with them: ⌈I/M⌉ goes first to the members that own that
// many already, which only the members meant to keep them stay at, so every member
// that looks in between sees the same destination for every item.
package partition
