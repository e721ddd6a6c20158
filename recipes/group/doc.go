// Package group is group membership on ZooKeeper: Apache Curator's GroupMember for
// Go, with its node layout, so Go and Java processes can be members of one group.
//
// A Member is the node path/<id>, ephemeral, holding the member's payload, and a
// view of the group: the children of path, id -> payload. The node is a
// nodes.PersistentNode, so it is made again after a session loss (and a node of
// another live session under the same id is never taken over: Start says
// ErrDuplicateID); the view is a cache.Cache of path at Depth(1), so it follows
// every join, leave and payload change through faults, and after a session loss
// rebuilds from the server. Members() is right again within the session timeout
// and a second after any change: the time for the server to expire a gone member's
// session, then one notification and one read.
//
// As in Curator, a member always counts itself in, even while its node is on its
// way back after a session loss. The parent path is made as a container, which the
// server removes once the group is empty.
//
// Cost. Where the server has persistent watches (ZooKeeper 3.6 and later), the view
// follows the group on one persistent recursive watch, which the framework sets
// itself: each member's session holds 2 server watches whatever the group's size,
// that one and its own node's (the persistent node's), 2M in a group of M, as
// Curator's GroupMember. On one-shot watches (an older server, or a client made
// framework.WithOneShotWatches) the view sets a data watch on every member's node,
// to hear its payload change: M + 1 server watches per member, M² in all. There, a
// member made with FixedPayload promises that its payload never
// changes and makes ZooKeeper hold it to that: its node's ACL grants READ only (the
// client's ACL for the path, cut to READ), so nobody can set its data or its ACL,
// and SetPayload is refused (ErrFixedPayload). The views of FixedPayload members
// read each new member's ACL once and watch no read-only node's data; a node deleted
// and made again between two listings is found through the group node's cversion
// instead (see cache.TrustReadOnly). A group of such members holds about 2 watches
// per member, at one more read (the ACL) per member per join. Mixed groups stay
// right: a member without the option, or Curator's, keeps its data watched, and
// needs only READ on the others' nodes. Limits: a super user, or any client of a
// server run with skipACL=yes, can still change a read-only node's data, and the
// views that trust it would not see that change.
//
// A closed client ends the membership: Start and SetPayload return an error
// wrapping framework.ErrClosed, Done is closed and Err says so. Close is still
// needed to free what the member holds.
package group
