package counter

import "errors"

var (
	// ErrInvalid is wrapped by the errors for bad arguments.
	ErrInvalid = errors.New("counter: invalid argument")
	// ErrBadData is wrapped by the error of any call that finds the counter's node
	// holding anything but 8 bytes: it is not a counter, or not Curator's layout.
	ErrBadData = errors.New("counter: node data is not an 8-byte big-endian long")
	// ErrUnknownOutcome is wrapped by the error of a write whose request was sent but
	// whose answer was lost (the connection dropped, the session expired, ctx ended
	// or the client closed while it was in flight), when no read could prove whether
	// ZooKeeper applied it. The write may or may not have happened; it is not retried.
	ErrUnknownOutcome = errors.New("counter: outcome unknown")
	// ErrGaveUp is wrapped by the error of an Add or CompareAndSet that lost the race
	// to other writers as often as its retry policy allows (and, with PromotedToLock,
	// once more under the lock): nothing was written.
	ErrGaveUp = errors.New("counter: gave up under contention")
)
