package discovery

import (
	"errors"

	"github.com/zkrecipes/zkrecipes/recipes/internal/lifecycle"
)

var (
	// ErrInvalid is wrapped by the errors for bad arguments: nothing was written.
	ErrInvalid = errors.New("discovery: invalid argument")
	// ErrNotFound is returned by Instance when the service has no such instance.
	ErrNotFound = errors.New("discovery: no such instance")
	// ErrNoInstance is returned by Pick when no instance is usable: none is known, or
	// every one is disabled, filtered out or marked down.
	ErrNoInstance = errors.New("discovery: no usable instance")
	// ErrIDTaken is wrapped by the error of a Register that found the instance's node
	// held by another live session (or a persistent node it did not make). The node
	// is left alone: unlike Curator, which deletes it.
	ErrIDTaken = errors.New("discovery: the instance id is registered by another client")
	// ErrBadInstance is wrapped by the error for a node whose data is not a service
	// instance's JSON.
	ErrBadInstance = errors.New("discovery: node data is not a service instance")
	// ErrStarted is returned by a second Start, ErrClosed after Close.
	ErrStarted, ErrClosed = lifecycle.Errors("discovery")
)
