// Package election elects one leader among processes, after Apache Curator's
// LeaderLatch and LeaderSelector, with their node layouts.
//
// A Latch joins the election with a node P/_c_<uuid>-latch-<seq> holding its id; the
// lowest sequence leads, and each participant watches only the node before its own.
// Leadership is given up (listeners hear false) when the client's error policy says
// the session may be lost; after Reconnected the latch looks at its node again: in
// the same session it keeps its place, otherwise it joins anew. Before it claims
// leadership it checks that its node belongs to the current session, so an expired
// session's node never makes a second leader (Curator's CURATOR-696).
//
// A Latch's Context ends when its current term of leadership does. Its listeners
// hear every change in order, on a goroutine of their own: the latch goes on
// following the election while a listener blocks, and Close, which never waits for a
// listener, may be called from one.
//
// A Selector runs a function while it leads: lead(ctx, term) gets the term's
// participant id and fencing token, and a context that ends when leadership may be
// lost, on InterruptLeadership, and on Close (context.Cause tells which:
// ErrLeadershipLost, ErrInterrupted, ErrClosed); leadership is given up when lead
// returns. It queues with the mutex's nodes
// (P/_c_<uuid>-lock-<seq>), as Curator's is built on its mutex; AutoRequeue enters
// the election again after every term.
//
// Start, of either, returns once our node is in the queue. So a client that the
// election's ACL refuses (framework.WithACL; the nodes and their container parents
// all get the client's ACL) hears it from Start at once: an error wrapping
// framework.ErrNoAuth.
//
// A closed client ends both: Start and Await return an error wrapping
// framework.ErrClosed, before or while they wait, and leadership ends (a latch's
// listeners hear false if it led). Close is still needed to free the rest.
//
// "Elect a single scheduler poller" is the use this package exists for: with the
// default error policy, two participants whose sessions are alive never both
// believe they lead.
package election
