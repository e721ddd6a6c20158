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

// Option configures a Partitioner. An option given a value it cannot take makes New
// return an error wrapping ErrInvalid that names the option.
type Option func(*options) error

type options struct {
	id        string
	items     []string
	fixed     bool                // Items was given
	given     map[string]struct{} // items, to find one given twice; nil after New
	itemsFrom string
	pause     time.Duration
}

// WithID sets this member's id: its node's name under path/members, and the data of
// its item locks, which `zkr inspect` and Curator's tools show. It must be unique
// among the members, and a valid node name (not empty, no "/"). Default "host:pid".
func WithID(id string) Option {
	return func(o *options) error {
		if err := args.CheckName(id); err != nil {
			return fmt.Errorf("WithID: %w", err)
		}
		o.id = id
		return nil
	}
}

// Items shares a fixed set of items: each name must be a valid node name, each once
// (across every Items given; Items may be given more than once, and adds). Default
// none: one of Items and ItemsFrom is required, and not both.
func Items(names ...string) Option {
	return func(o *options) error {
		for _, name := range names {
			if err := args.CheckName(name); err != nil {
				return fmt.Errorf("Items: %w", err)
			}
			if _, ok := o.given[name]; ok {
				return fmt.Errorf("Items: %q given twice", name)
			}
			if o.given == nil {
				o.given = map[string]struct{}{}
			}
			o.given[name] = struct{}{}
			o.items = append(o.items, name)
		}
		o.fixed = true
		return nil
	}
}

// ItemsFrom shares the children of path, followed as they come and go (an item
// deleted stops its work; one created starts it on its owner). path must be a valid
// absolute path outside the partitioner's own. Default none: one of Items and
// ItemsFrom is required, and not both.
func ItemsFrom(path string) Option {
	return func(o *options) error {
		if err := framework.ValidatePath(path); err != nil {
			return fmt.Errorf("ItemsFrom: %w", err)
		}
		o.itemsFrom = path
		return nil
	}
}

// WithRestartPause sets how long to wait before running work again when it returns
// while its item is still ours (with an error or none). Default one second. A
// negative d is refused; 0 runs work again at once.
func WithRestartPause(d time.Duration) Option {
	return func(o *options) error {
		if d < 0 {
			return fmt.Errorf("WithRestartPause: negative pause %v", d)
		}
		o.pause = d
		return nil
	}
}

func newOptions(c *framework.Client, path string, opts []Option) (options, error) {
	o := options{id: args.DefaultID(), pause: time.Second}
	if err := args.Check(c, path); err != nil {
		return o, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := args.Apply(&o, opts); err != nil {
		return o, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	// What no option can see alone: the items' source, against the other options
	// and the partitioner's path.
	switch {
	case o.fixed && o.itemsFrom != "":
		return o, fmt.Errorf("%w: both Items and ItemsFrom", ErrInvalid)
	case o.itemsFrom != "":
		if o.itemsFrom == path || strings.HasPrefix(o.itemsFrom, path+"/") {
			return o, fmt.Errorf("%w: ItemsFrom(%q) is inside the partitioner's own path %q", ErrInvalid, o.itemsFrom, path)
		}
	case len(o.items) == 0:
		return o, fmt.Errorf("%w: no items: give Items(names...) or ItemsFrom(path)", ErrInvalid)
	}
	o.given = nil
	return o, nil
}
