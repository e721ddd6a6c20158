// Package cache keeps a local copy of a ZooKeeper node, its children or its whole
// subtree, and tells listeners how it changes: Apache Curator's CuratorCache,
// TreeCache, PathChildrenCache and NodeCache in one type. Depth(0) follows one node,
// Depth(1) a node and its children, and the default the whole subtree; WithoutData
// keeps stats only; WithSelector leaves subtrees out; TrustReadOnly follows the nodes
// no one may change (their ACL grants no WRITE or ADMIN) without a data watch.
//
// Where the server has persistent watches (ZooKeeper 3.6 and later), the cache
// follows its tree on one of them, as Curator's CuratorCache does: one recursive
// watch on the path (a persistent one for Depth(0)), whatever the tree's size. A
// created or changed node is read once, a deleted one not at all, and after any
// connection loss the watch, set again, says so and the cache reads every node again
// (persistent.go). On a server without them, or a client made
// framework.WithOneShotWatches, it reads every node with a watch and reads it again,
// with a new watch, each time the watch fires. Either loop is easy to get subtly
// wrong, and this package exists so that no recipe writes it twice (the group,
// discovery, partition and shared-value recipes follow their nodes through it):
//
//   - The latest state, and an event for each change seen. A node has at most one
//     read of each kind (data, children) in flight, and a watch that fires meanwhile
//     asks for another read after it, so a change made while a watch is being set
//     again is read, and the copy ends at the node's latest state. A read gives the
//     node as it is then: changes made faster than the reads come as one Changed,
//     whose version skips the ones never seen. A node deleted and
//     created again between two reads is told apart by its czxid and reported as
//     Deleted then Created, even when its version is the same; a node created after
//     its parent's last listing joins the copy only once a listing of that parent
//     shows it, so it is never filed under an earlier incarnation of its parent.
//   - No impossible history. A listener never hears Changed or Deleted of a node it
//     was not told exists, Created twice without a Deleted between, a version that
//     goes back, or a child before its parent is created or after it is deleted.
//     Stale answers (an older incarnation, older data) are ignored, never applied.
//   - Connection faults. On Suspended the cache says so and keeps its copy; when the
//     connection is back it reads every node again and says Synced. After a session
//     loss (Lost) every watch is gone: the cache first Syncs the new session's
//     server (which may lag the one it read from), then reads every node again and
//     reports only the differences, as ordinary events, then Synced. When the client
//     finds the ensemble rebuilt (framework.Rebuilt: replaced by a fresh one, or
//     restored from an older copy), the copy's zxids belong to a history that is
//     gone: the cache empties the copy (Deleted for every node, children first),
//     loads the new ensemble's tree (Created for every node), then says Synced.
//   - The cached node may not exist yet, or be deleted and come back: the cache
//     watches for its creation (one existence watch) and follows it.
//   - Cost. On a persistent watch: one watch on the server, one read per node
//     created or changed, none per node deleted; the child fields of a parent's
//     stat follow its children's creations and deletions with no read (on 3.8,
//     whose notifications carry no zxid, the parent is read again). On one-shot
//     watches: one data watch and one child watch per cached node at most (a second
//     read while a watch is armed sets none), one read per watch that fired, plus
//     the reads of each node newly seen. Nothing is polled. At most 32 reads are in
//     flight, each on a goroutine while it lasts, and the notifications come on the
//     client's receiving goroutine: there is no goroutine per node, and an idle
//     cache has none but its loop and its listeners'. Close removes the persistent
//     watch from the server; one-shot watches already set stay until they fire or
//     the session ends (go-zookeeper cannot remove them), and none is set again.
//   - A node an ACL refuses is reported once (an Error event wrapping ErrRefused)
//     and left out, not asked for again in a loop.
//   - Before its client's first session, Start waits for one as the client's
//     operations do, one connection timeout at most, and then returns the client's
//     *framework.ConnectError: the cache is left unstarted, and Start may be tried
//     again.
//   - A closed client ends the cache: Start returns an error wrapping
//     framework.ErrClosed, and the listeners hear Stopped (its Err wraps it too),
//     once and last. Close is still needed to free what the cache holds.
//
// Listeners hear events in order, one at a time, on a goroutine of the cache's;
// register them before Start to hear the copy being loaded. Get, Children, Len and
// Nodes read the copy at any time, also after Close.
package cache
