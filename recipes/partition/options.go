package partition

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/zkrecipes/recipes/internal/lifecycle"
)

var (
	// ErrStarted is returned by a second Start; ErrClosed after Close. (A closed
	// client's errors wrap framework.ErrClosed instead.)
	ErrStarted, ErrClosed = lifecycle.Errors("partition")
	// ErrInvalid is wrapped by the errors for bad arguments.
	ErrInvalid = errors.New("partition: invalid argument")
)

// Option configures a Partitioner.
type Option func(*options)

type options struct {
	id        string
	items     []string
	fixed     bool // Items was given
	itemsFrom string
	pause     time.Duration
}

// WithID sets this member's id: its node's name under path/members, and the data of
// its item locks, which `zkr inspect` and Curator's tools show. It must be unique
// among the members. Default "host:pid".
func WithID(id string) Option { return func(o *options) { o.id = id } }

// Items shares a fixed set of items: each name must be a valid node name, each once.
func Items(names ...string) Option {
	return func(o *options) { o.items, o.fixed = append(o.items, names...), true }
}

// ItemsFrom shares the children of path, followed as they come and go (an item
// deleted stops its work; one created starts it on its owner).
func ItemsFrom(path string) Option { return func(o *options) { o.itemsFrom = path } }

// WithRestartPause sets how long to wait before running work again when it returns
// while its item is still ours (with an error or none). Default one second.
func WithRestartPause(d time.Duration) Option { return func(o *options) { o.pause = d } }

func newOptions(c *framework.Client, path string, opts []Option) (options, error) {
	o := options{id: args.DefaultID(), pause: time.Second}
	if err := args.Check(c, path); err != nil {
		return o, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	for _, opt := range opts {
		if opt == nil {
			return o, fmt.Errorf("%w: nil Option", ErrInvalid)
		}
		opt(&o)
	}
	if err := args.CheckName(o.id); err != nil {
		return o, fmt.Errorf("%w: id: %w", ErrInvalid, err)
	}
	if o.pause < 0 {
		return o, fmt.Errorf("%w: negative restart pause %v", ErrInvalid, o.pause)
	}
	switch {
	case o.fixed && o.itemsFrom != "":
		return o, fmt.Errorf("%w: both Items and ItemsFrom", ErrInvalid)
	case o.itemsFrom != "":
		if err := framework.ValidatePath(o.itemsFrom); err != nil {
			return o, fmt.Errorf("%w: ItemsFrom: %w", ErrInvalid, err)
		}
		if o.itemsFrom == path || strings.HasPrefix(o.itemsFrom, path+"/") {
			return o, fmt.Errorf("%w: ItemsFrom(%q) is inside the partitioner's own path %q", ErrInvalid, o.itemsFrom, path)
		}
	case !o.fixed || len(o.items) == 0:
		return o, fmt.Errorf("%w: no items: give Items(names...) or ItemsFrom(path)", ErrInvalid)
	}
	seen := map[string]bool{}
	for _, name := range o.items {
		if err := args.CheckName(name); err != nil {
			return o, fmt.Errorf("%w: item: %w", ErrInvalid, err)
		}
		if seen[name] {
			return o, fmt.Errorf("%w: item %q given twice", ErrInvalid, name)
		}
		seen[name] = true
	}
	return o, nil
}
