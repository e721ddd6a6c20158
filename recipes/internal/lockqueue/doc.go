// Package lockqueue is the one engine behind every lock-like recipe, as Curator's
// LockInternals is: each participant creates a protected ephemeral-sequential node
// under the lock's path, lists the children in sequence order, and asks the recipe's
// Rule whether it holds; if not, the Rule names the single node to watch, and the
// participant waits for that node to change, for its context, or for a change of
// the connection's state, then looks again. A release therefore wakes one waiter,
// never a herd.
//
// What every recipe gets from here, once: the node's session is remembered when it is
// created, and a node of an earlier session is never taken for ours (Curator's
// CURATOR-604); a participant whose node vanished with its session starts again with
// a new one, as the client's retry policy allows; every failure and cancellation
// deletes our node (guaranteed, so even with the connection down); a held node comes
// with a Lost channel that closes when the client's error policy says the session may
// be gone, and a fencing token that grows with every holder.
//
// Round trips: an uncontended acquisition costs a create and a list, and the release
// a delete; a contended one adds a data watch and a list per wake-up.
package lockqueue
