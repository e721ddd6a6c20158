// Package nodes keeps a node in place through faults: Apache Curator's PersistentNode
// for Go, with its node layout, so Go and Java processes can share the paths.
//
// A PersistentNode makes its node at Start and keeps it there until Close: when the
// node's session ends (an ephemeral node goes with it) or someone deletes it, the
// node is made again as soon as a session is back, at the same actual path and with
// the latest data given to SetData. Watching the node costs one watch; a reconnect
// or a new session makes the keeper look at once, not after its next pause.
//
// Listen tells when the node is made, found gone and made again (Curator's
// PersistentNodeListener hears only creations).
//
// A node is only ever taken for ours when it is: an ephemeral node must belong to
// the current session. One left by an earlier session of this client (a session the
// client gave up, which the server has not ended yet) is deleted and made again, never
// mistaken for the current one. A node of another client at the path is never
// overwritten or deleted: Start fails with ErrNodeExists, naming its session, and a
// PersistentNode that finds such a node after Start keeps trying until it is gone. A
// persistent node does not say who made it, so a PersistentNode takes over only the
// one it made itself (or the one its own create made before its reply was lost), and
// refuses any other.
//
// The kinds are Curator's CreateModes: Ephemeral (the default), Persistent, TTL
// (a persistent node the server deletes when unused; the server must allow TTL nodes),
// each optionally Protected (named _c_<uuid>-<name>, Curator's protected mode) and,
// with Protected, Sequential. Parents are made as container nodes, as Curator does.
// ReadOnly makes the node with its ACL cut to READ, so that nobody can change its
// data or its ACL (but a super user, or any client of a server run with
// skipACL=yes), and readers may trust it never to change.
//
// Close deletes the node. Without a connection the delete goes on in the background
// as long as the node may still exist: for an ephemeral node, while its session may
// still be alive; it never deletes a node another client made at the path meanwhile.
// A closed client ends the PersistentNode too: Start and SetData return an error
// wrapping framework.ErrClosed, and the listeners hear a last Event whose Err wraps
// it.
package nodes
