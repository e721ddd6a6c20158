package nodes

// Event is a change of the node's presence, as the PersistentNode sees it.
type Event struct {
	Path string // the node's actual path
	// Present is true when the node was made, made again or taken over, and false
	// when it was found gone (deleted, or gone with its session) or not ours: the
	// PersistentNode is making it again.
	Present bool
	// Err is set on the last event only, when the PersistentNode stopped keeping the
	// node because its client closed (it wraps framework.ErrClosed); Present is false
	// then: the node went with the client's session.
	Err error
}
