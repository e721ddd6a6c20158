package lockqueue

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/zkrecipes/zkrecipes/framework"
)

// CheckArgs is the check every recipe's constructor makes of its client and path;
// the recipe wraps what it returns in its own ErrInvalid.
func CheckArgs(c *framework.Client, path string) error {
	switch {
	case c == nil:
		return errors.New("nil client")
	case path == "/":
		return errors.New("the path cannot be the root")
	}
	return framework.ValidatePath(path)
}

// DefaultID is the participant id a recipe stores in its nodes when given none:
// "host:pid", enough for an operator to find the process.
func DefaultID() string {
	host, _ := os.Hostname()
	return host + ":" + strconv.Itoa(os.Getpid())
}

// Closed is a closed channel: the Lost of a participant that holds nothing.
var Closed <-chan struct{} = closed

// Rename gives an error of a hold's operation the recipe's own names: notHeld for
// ErrNotHeld, lost (wrapping the cause) for ErrLost, and where ("mutex: release
// /locks/x") in front of any other.
func Rename(err, notHeld, lost error, where string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrNotHeld):
		return notHeld
	case errors.Is(err, ErrLost):
		return fmt.Errorf("%w: %w", lost, err)
	}
	return fmt.Errorf("%s: %w", where, err)
}

// CheckName is the check of a name that a recipe makes one node of (a group
// member's id, a partitioned item): one path segment, which ZooKeeper takes.
func CheckName(name string) error {
	if name == "" {
		return errors.New("empty name")
	}
	if strings.Contains(name, "/") {
		return fmt.Errorf("%q is not a node name: it holds a %q", name, "/")
	}
	if err := framework.ValidatePath("/" + name); err != nil {
		return fmt.Errorf("%q is not a node name: %w", name, err)
	}
	return nil
}
