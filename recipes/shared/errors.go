package shared

import (
	"errors"

	"github.com/zkrecipes/zkrecipes/recipes/internal/lifecycle"
)

var (
	// ErrInvalid is wrapped by the errors for bad arguments.
	ErrInvalid = errors.New("shared: invalid argument")
	// ErrBadData is wrapped by the error of a Count's Start when its node does not
	// hold a 4-byte big-endian int (Curator's SharedCount layout).
	ErrBadData = errors.New("shared: node data is not a 4-byte big-endian int")
	// ErrNotStarted is returned by writes before Start.
	ErrNotStarted = errors.New("shared: not started")
	// ErrStarted is returned by a second Start; ErrClosed by calls after Close. (A
	// closed client's errors wrap framework.ErrClosed instead.)
	ErrStarted, ErrClosed = lifecycle.Errors("shared")
	// ErrUnknownOutcome is wrapped by the error of a Set or TrySet whose request was
	// sent but whose answer was lost (the connection dropped, the session expired,
	// ctx ended or the client closed while it was in flight), when no read could
	// prove whether ZooKeeper applied it. The listeners will hear the value the node
	// ends up with either way.
	ErrUnknownOutcome = errors.New("shared: outcome unknown")
)
