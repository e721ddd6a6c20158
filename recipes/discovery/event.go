package discovery

import "strconv"

// EventType says what an Event reports.
type EventType int

const (
	// Added: an instance appeared (New).
	Added EventType = iota + 1
	// Updated: an instance's data changed (Old and New).
	Updated
	// Removed: an instance left (Old): unregistered, or its session expired.
	Removed
	// Suspended: the connection dropped. The instances are kept, and may be stale
	// until Synced.
	Suspended
	// Lost: the session ended. The instances are kept; the provider reads them again
	// in the new session, reporting only the differences, then Synced.
	Lost
	// Synced: after Suspended or Lost, the instances are as current as a fresh read.
	Synced
	// Error: a node of the service could not be taken as an instance (Path, Err):
	// its data is not an instance's JSON (Err wraps ErrBadInstance), or an ACL
	// refused the read. Reported once per version of the node.
	Error
	// Stopped: the provider's client closed (Err wraps framework.ErrClosed). It is
	// the last event: the instances are kept as they were, and Pick goes on answering
	// from them; nothing follows the service any more.
	Stopped
)

var eventNames = [...]string{"", "Added", "Updated", "Removed", "Suspended", "Lost", "Synced", "Error", "Stopped"}

func (t EventType) String() string {
	if t <= 0 || int(t) >= len(eventNames) {
		return "EventType(" + strconv.Itoa(int(t)) + ")"
	}
	return eventNames[t]
}

// Event is one change of a provider's instances or of its connection.
type Event struct {
	Type EventType
	// Old is the instance before the change (Updated, Removed); New after it (Added,
	// Updated).
	Old, New Instance
	// Path is the instance's node, for Added, Updated, Removed and Error.
	Path string
	// Err says what went wrong, for Error, and why the provider stopped, for Stopped.
	Err error
}
