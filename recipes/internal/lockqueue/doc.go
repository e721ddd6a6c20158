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
// be gone and as soon as the node is deleted (its holder's one watch, heard on the
// client's receiving goroutine: holders.go), with the reason (Held.Cause), and a
// fencing token that grows with every holder: the node's czxid, which anyone reading
// the server sees.
//
// Metrics and traces, through the client's OpenTelemetry providers, are measured
// here once for every recipe, by the queue's Observer, each under the recipe name it
// was made with (Observe):
// zkrecipes.lock.wait.duration (by recipe and outcome: acquired, timed_out,
// cancelled, refused, failed), zkrecipes.lock.hold.duration and
// zkrecipes.lock.holds_lost (by recipe), zkrecipes.lock.waiters (waiting now, by
// recipe) and, for an election's (ObserveElection), zkrecipes.election.leadership_changes (by
// recipe and change: gained, ended); and a span "<recipe> acquire" around each
// acquisition, with the path, the outcome, our node and the fencing token. The loop
// only tells the observer what happened (begun, queued, ended; granted, lost,
// released), and a nil observer costs nothing. A new lock-like recipe gets all of it
// by giving its Queue an Observer; one whose acquisition takes several steps (the
// semaphore: its lock, then its leases) measures the whole with the observer's Begin
// and End, and gives the queue of its steps the observer's HoldsOnly. A recipe that
// does not queue (a cache, a counter) reports through recipes/internal/instrument,
// which sets up its instruments the same way and costs nothing either when the
// providers are off. Recipe names and attribute values must stay a small fixed set:
// never a path, a node or a session as a metric attribute.
//
// Round trips, not only requests, are what a user waits for (DESIGN.md). An
// uncontended acquisition is one: the create and the listing in one flight, the
// create's reply giving the fencing token; the holder's watch on its own node (the
// price of a hold that ends when its node is deleted) is sent once it holds, and
// nothing waits for it. The release is the delete. A waiter sets the watch on the
// node before it; the one behind the first node sets its own node's watch in the
// same flight, and, for the recipes whose queue allows it (HandOverOnNotification:
// mutex, the semaphore's lock, latch, selector), holds on the deletion's
// notification itself, with no request. Any other waiter, woken, lists with its own
// node's watch in the same flight: one round trip. No participant watches its own
// node before it holds or is next in line (a latch's candidates included).
// Queue.wait says why the hand-over on the notification is safe, and where it does
// not apply.
package lockqueue
