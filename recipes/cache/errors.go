package cache

import (
	"errors"

	"github.com/zkrecipes/zkrecipes/recipes/internal/lifecycle"
)

var (
	// ErrInvalid is wrapped by the errors for bad arguments.
	ErrInvalid = errors.New("cache: invalid argument")
	// ErrStarted is returned by a second Start; ErrClosed by Start after Close, and
	// by a Start that Close interrupted. (A closed client's errors wrap
	// framework.ErrClosed instead.)
	ErrStarted, ErrClosed = lifecycle.Errors("cache")
	// ErrRefused is wrapped by the Err of an Error event: an ACL refused the cache's
	// client a read of a node (it wraps framework.ErrNoAuth too). The node is
	// reported once, and not read again until it is deleted and re-created.
	ErrRefused = errors.New("cache: refused by an ACL")
)
