package cache

import (
	"strconv"

	"github.com/zkrecipes/zkrecipes/framework"
)

// Node is one node of the copy, as the server had it when the cache last read it.
type Node struct {
	Path string
	// Data is the node's data; nil with WithoutData. Shared with the copy and with
	// every event that carries it: read it, never change it.
	Data []byte
	// Stat is the node's stat. Its data fields (Mzxid, Version, DataLength, Mtime)
	// come from the last read of the data and its child fields (Cversion,
	// NumChildren, Pzxid) from the last listing of the children; a node whose
	// children the cache does not follow (Depth) has child fields as of its last
	// data read.
	Stat framework.Stat
}

// EventType says what an Event reports.
type EventType int

const (
	// Created: a node entered the copy (New). A node is created before its children.
	Created EventType = iota + 1
	// Changed: a node's data changed (Old and New; New.Stat.Version is greater).
	Changed
	// Deleted: a node left the copy (Old). Its children are deleted before it.
	Deleted
	// Initialized: the first complete copy is loaded. Start returns after it.
	Initialized
	// Suspended: the connection dropped. The copy is kept, and may be stale until
	// Synced.
	Suspended
	// Lost: the session ended, and the watches with it. The copy is kept; the cache
	// rebuilds it from the server in the new session, reporting only the differences
	// as Created, Changed and Deleted, then Synced.
	Lost
	// Synced: after Suspended or Lost, every node of the copy has been read again
	// from the server: the copy is as current as a fresh one would be.
	Synced
	// Error: a part of the tree could not be read (Path, Err): an ACL refused it
	// (Err wraps ErrRefused). Reported once per node.
	Error
	// Stopped: the cache's client closed (Err wraps framework.ErrClosed). It is the
	// last event: the cache reads nothing more, and its copy stays as it was.
	Stopped
)

var eventNames = [...]string{"", "Created", "Changed", "Deleted", "Initialized", "Suspended", "Lost", "Synced", "Error", "Stopped"}

func (t EventType) String() string {
	if t <= 0 || int(t) >= len(eventNames) {
		return "EventType(" + strconv.Itoa(int(t)) + ")"
	}
	return eventNames[t]
}

// Event is one change of the copy or of the cache's connection.
type Event struct {
	Type EventType
	// Path is the node's, for Created, Changed, Deleted and Error.
	Path string
	// Old is the node before the change, for Changed and Deleted; New after it, for
	// Created and Changed.
	Old, New Node
	// Err says what went wrong, for Error, and why the cache stopped, for Stopped.
	Err error
}
