// Package holds takes any of the recipes' holds by name, for the fault tests and for
// the holder process they pause (integration/holder): a mutex, a write lock, a lease
// of a one-lease semaphore, or a latch's leadership.
package holds

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/election"
	"github.com/zkrecipes/zkrecipes/recipes/mutex"
	"github.com/zkrecipes/zkrecipes/recipes/rwlock"
	"github.com/zkrecipes/zkrecipes/recipes/semaphore"
)

// Held is what every recipe gives a holder.
type Held interface {
	Lost() <-chan struct{}
	FencingToken() int64
	Node() string
	Release(ctx context.Context) error
}

// Recipes are the names New knows.
var Recipes = []string{"mutex", "write", "lease", "latch"}

// New makes one participant of recipe at path and returns how it takes its hold,
// which it may do again once it has released.
func New(c *framework.Client, recipe, path string) (func(context.Context) (Held, error), error) {
	switch recipe {
	case "mutex":
		m, err := mutex.New(c, path)
		return func(ctx context.Context) (Held, error) { return m, m.Acquire(ctx) }, err
	case "write":
		l, err := rwlock.New(c, path)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) (Held, error) { return l.WriteLock(), l.WriteLock().Acquire(ctx) }, nil
	case "lease":
		s, err := semaphore.New(c, path, 1)
		return func(ctx context.Context) (Held, error) {
			ls, err := s.Acquire(ctx, 1)
			if err != nil {
				return nil, err
			}
			return ls[0], nil
		}, err
	case "latch":
		return func(ctx context.Context) (Held, error) { return lead(ctx, c, path) }, nil
	}
	return nil, fmt.Errorf("holds: unknown recipe %q", recipe)
}

// leadership is a latch's term as a hold: Lost closes when it stops leading, and
// Release leaves the election.
type leadership struct {
	*election.Latch
	lost chan struct{}
	once sync.Once
	stop func()
}

// lead joins the election at path with a new latch and returns once it leads.
func lead(ctx context.Context, c *framework.Client, path string) (*leadership, error) {
	l, err := election.NewLatch(c, path)
	if err != nil {
		return nil, err
	}
	ld := &leadership{Latch: l, lost: make(chan struct{})}
	// Listening before Start: no change of leadership goes unheard.
	ld.stop = l.Listen(func(isLeader bool) {
		if !isLeader {
			ld.once.Do(func() { close(ld.lost) })
		}
	})
	if err := l.Start(ctx); err != nil {
		return nil, errors.Join(err, ld.Release(context.WithoutCancel(ctx)))
	}
	if err := l.Await(ctx); err != nil {
		return nil, errors.Join(err, ld.Release(context.WithoutCancel(ctx)))
	}
	return ld, nil
}

func (ld *leadership) Lost() <-chan struct{} { return ld.lost }

func (ld *leadership) Release(ctx context.Context) error {
	ld.stop()
	return ld.Close(ctx)
}
