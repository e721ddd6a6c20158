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
// A closed client ends the membership: Start and SetPayload return an error
// wrapping framework.ErrClosed, Done is closed and Err says so. Close is still
// needed to free what the member holds.
package group
