package framework

import "github.com/go-zookeeper/zk"

// go-zookeeper's types, errors and ACL helpers that the Client's API hands out, under
// this package's name, so that a program imports only zkrecipes. They are the same
// types and the same error values, not copies: errors.Is matches a
// framework.ErrNoNode against zk.ErrNoNode and the other way round, and a
// *framework.Stat is a *zk.Stat.

type (
	// Stat is a node's metadata: its versions, zxids, ephemeral owner, data length
	// and number of children.
	Stat = zk.Stat
	// Event is a watch notification: its Type, the Path it is about, and for
	// EventNotWatching the Err that ended the watch.
	Event = zk.Event
	// EventType says what a watch notification is about.
	EventType = zk.EventType
	// ACL is one access control entry: permissions (PermRead...) for an id in a
	// scheme ("world", "digest", "auth", ...).
	ACL = zk.ACL
	// Dialer makes the TCP connections to the servers (WithDialer).
	Dialer = zk.Dialer
)

// The watch notifications a watch channel or OnWatchEvent delivers.
const (
	EventNodeCreated         = zk.EventNodeCreated
	EventNodeDeleted         = zk.EventNodeDeleted
	EventNodeDataChanged     = zk.EventNodeDataChanged
	EventNodeChildrenChanged = zk.EventNodeChildrenChanged
	// EventNotWatching: the watch was dropped without firing, because its session
	// ended (Event.Err says why).
	EventNotWatching = zk.EventNotWatching
)

// The permissions of an ACL entry, combined with |.
const (
	PermRead   = zk.PermRead
	PermWrite  = zk.PermWrite
	PermCreate = zk.PermCreate
	PermDelete = zk.PermDelete
	PermAdmin  = zk.PermAdmin
	PermAll    = zk.PermAll
)

// The errors of requests the server refused, and of the connection, that callers
// check with errors.Is. Every error the Client returns for these wraps them.
var (
	// ErrNoNode: the node does not exist.
	ErrNoNode = zk.ErrNoNode
	// ErrNodeExists: a create found the node already there.
	ErrNodeExists = zk.ErrNodeExists
	// ErrBadVersion: the node's version is not the one the request expected.
	ErrBadVersion = zk.ErrBadVersion
	// ErrNotEmpty: a delete found children under the node.
	ErrNotEmpty = zk.ErrNotEmpty
	// ErrNoAuth: the node's ACL refuses the client's credentials.
	ErrNoAuth = zk.ErrNoAuth
	// ErrInvalidACL: the server refused the ACL given for a new node.
	ErrInvalidACL = zk.ErrInvalidACL
	// ErrAuthFailed: the server refused the client's credentials (WithAuth).
	ErrAuthFailed = zk.ErrAuthFailed
	// ErrNoChildrenForEphemerals: a create under an ephemeral node.
	ErrNoChildrenForEphemerals = zk.ErrNoChildrenForEphemerals
	// ErrSessionExpired: the server expired the session, and its ephemeral nodes
	// with it. Never retried (see IsRetryable).
	ErrSessionExpired = zk.ErrSessionExpired
	// ErrConnectionClosed: the connection dropped under the request (retryable).
	ErrConnectionClosed = zk.ErrConnectionClosed
	// ErrNoServer: no server could be reached (retryable).
	ErrNoServer = zk.ErrNoServer
	// ErrSessionMoved: the session moved to another server (retryable).
	ErrSessionMoved = zk.ErrSessionMoved
	// ErrReconfigDisabled: the servers do not allow Reconfig (reconfigEnabled=true).
	ErrReconfigDisabled = zk.ErrReconfigDisabled
)

// WorldACL is an ACL that gives perms to everyone.
func WorldACL(perms int32) []ACL { return zk.WorldACL(perms) }

// DigestACL is an ACL that gives perms to the client that authenticates as user
// with password (WithAuth("digest", []byte("user:password"))).
func DigestACL(perms int32, user, password string) []ACL {
	return zk.DigestACL(perms, user, password)
}

// AuthACL is an ACL that gives perms to whoever created the node, as authenticated
// then.
func AuthACL(perms int32) []ACL { return zk.AuthACL(perms) }
