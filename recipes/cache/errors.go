package cache

import "errors"

var (
	// ErrInvalid is wrapped by the errors for bad arguments.
	ErrInvalid = errors.New("cache: invalid argument")
	// ErrStarted is returned by a second Start.
	ErrStarted = errors.New("cache: already started")
	// ErrClosed is returned by Start after Close, and by a Start that Close
	// interrupted.
	ErrClosed = errors.New("cache: closed")
	// ErrRefused is wrapped by the Err of an Error event: an ACL refused the cache's
	// client a read of a node (it wraps framework.ErrNoAuth too). The node is
	// reported once, and not read again until it is deleted and re-created.
	ErrRefused = errors.New("cache: refused by an ACL")
)
