package main

import (
	"errors"
	"fmt"

	"github.com/zkrecipes/zkrecipes/framework"
)

// nodeError is a failed request on the node at p, with the exit code and the words
// its cause deserves: ZooKeeper's refusals each have their own, anything else
// (the connection, the session) is 69.
func nodeError(p string, err error) error {
	var ee *exitError
	switch {
	case errors.As(err, &ee):
		return err
	case errors.Is(err, framework.ErrNoNode):
		return &exitError{exitNoNode, fmt.Sprintf("%s: no such node", p)}
	case errors.Is(err, framework.ErrNodeExists):
		return &exitError{exitExists, fmt.Sprintf("%s: the node exists", p)}
	case errors.Is(err, framework.ErrBadVersion):
		return &exitError{exitData, fmt.Sprintf("%s: the node's version is not the one given (--version)", p)}
	case errors.Is(err, framework.ErrNotEmpty):
		return &exitError{exitData, fmt.Sprintf("%s: the node has children (-r deletes them too)", p)}
	case errors.Is(err, framework.ErrNoAuth):
		return &exitError{exitNoPerm, fmt.Sprintf("%s: refused by the node's ACL (credentials: --auth, $ZK_AUTH or --auth-file)", p)}
	case errors.Is(err, framework.ErrAuthRequired):
		return &exitError{exitNoPerm, fmt.Sprintf("%s: the server requires authentication: give credentials (--auth, $ZK_AUTH or --auth-file) or a SASL login (--sasl-mechanism, see zkr --help)", p)}
	case errors.Is(err, framework.ErrTTLDisabled):
		return zkError("%s: the server does not allow TTL nodes (it needs zookeeper.extendedTypesEnabled=true)", p)
	case errors.Is(err, framework.ErrNoChildrenForEphemerals):
		return &exitError{exitData, fmt.Sprintf("%s: its parent is ephemeral, which cannot have children", p)}
	}
	return zkError("%s: %v", p, err)
}
