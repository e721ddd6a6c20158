// Package barrier holds processes back until a condition is met, after Apache
// Curator's DistributedBarrier and DistributedDoubleBarrier, with their node layouts,
// so Go and Java processes can share a barrier.
//
// A Barrier is one node: Set makes it, Remove deletes it, and Wait blocks while it
// exists. Waiters watch that one node, and wait through lost connections and
// sessions.
//
// A Double synchronises the start and the end of a computation among members. Enter
// makes the member's ephemeral node P/<uuid> and blocks until members nodes are
// there; the member that sees the barrier full makes P/ready, whose creation lets the
// others pass. Leave blocks until every member's node is gone: the lowest member (in
// name order) waits for the highest, the others delete their own node and wait for
// the lowest, and the last to go deletes P/ready. Both are Curator's algorithm, with
// these differences, each a Curator bug not repeated:
//
//   - Enter passes only on a count of members taken after our node exists, or on a
//     ready node made after it. A ready node left by an earlier round (its members
//     crashed before deleting it) lets Curator's members pass alone; here it is
//     deleted, and the barrier waits for the count.
//   - Every wake-up, spurious or not, looks at the server again before passing.
//   - A failed or cancelled Enter or Leave deletes our node, so that nobody counts a
//     member that gave up (CURATOR-80).
//
// Sessions: a member node is ephemeral, so a member whose session ends counts as
// gone. While it waits in Enter, it joins again with a new node in its next session.
// Between Enter and Leave, or during Leave, it counts as having left: the other
// members may pass their Leave before it has finished, and its own Leave, once the
// others have gone, returns an error wrapping ErrLost. Curator's members behave the
// same way, except that they give up with an exception.
//
// Members counts are a threshold, not a limit: more than members may enter.
package barrier
