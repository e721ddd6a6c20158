package args

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/zkrecipes/zkrecipes/framework"
)

// Check is the check every recipe's constructor makes of its client and path.
func Check(c *framework.Client, path string) error {
	if c == nil {
		return errors.New("nil client")
	}
	return CheckPath(path)
}

// CheckPath is Check's check of a path, for a path given in an option (a counter's
// lock): absolute, valid for ZooKeeper (an error wrapping framework.ErrInvalidPath),
// and not the root, which no recipe can own.
func CheckPath(path string) error {
	if path == "/" {
		return errors.New("the path cannot be the root")
	}
	return framework.ValidatePath(path)
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

// CheckID is the check of a participant id given to WithID (the data of a lock's or
// an election's node): not empty, since a participant with no id is one that nobody
// can name. Leaving WithID out gives DefaultID.
func CheckID(id string) error {
	if id == "" {
		return errors.New("WithID: empty id (leave WithID out for the default, host:pid)")
	}
	return nil
}

// SetID is a WithID option's body: it sets *dst to id, or refuses an empty id.
func SetID(dst *string, id string) error {
	if err := CheckID(id); err != nil {
		return err
	}
	*dst = id
	return nil
}

// DefaultID is the participant id a recipe stores in its nodes when given none:
// "host:pid", enough for an operator to find the process.
func DefaultID() string {
	host, _ := os.Hostname()
	return host + ":" + strconv.Itoa(os.Getpid())
}
