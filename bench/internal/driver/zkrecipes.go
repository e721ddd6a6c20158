package driver

import (
	"context"
	"fmt"
	"strings"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/election"
	"github.com/zkrecipes/zkrecipes/recipes/mutex"
	"github.com/zkrecipes/zkrecipes/recipes/rwlock"
	"github.com/zkrecipes/zkrecipes/recipes/semaphore"
)

// zkrecipes, as a user would run it: one framework.Client per session with its
// defaults (retries, the standard error policy), one recipe value per participant.
func newZKRecipes(addr string) contender { return newRecipesContender(recipesName, addr) }

// zkrecipes-oneshot is the same with every client made framework.WithOneShotWatches:
// the followers of state (the cache, and the group and discovery on it) set one-shot
// watches, as on a server without persistent watches (before ZooKeeper 3.6), or as
// every follower did before issue 36.
func newZKRecipesOneShot(addr string) contender {
	return newRecipesContender(oneShotName, addr, framework.WithOneShotWatches())
}

func newRecipesContender(name, addr string, opts ...framework.Option) contender {
	opts = append([]framework.Option{framework.WithSessionTimeout(sessionTimeout)}, opts...)
	return &goContender{
		name:  name,
		kinds: []kind{cycles, contended, rw, counting, handover, queue},
		addr:  addr,
		dial: func(ctx context.Context, addr string) (goSession, error) {
			c, err := framework.New(strings.Split(addr, ","), opts...)
			if err != nil {
				return nil, err
			}
			if err := c.WaitConnected(ctx); err != nil {
				_ = c.Close()
				return nil, fmt.Errorf("connecting to %s: %w", addr, err)
			}
			return &recipesSession{c: c}, nil
		},
	}
}

// isRecipes says whether a contender runs this module's recipes, in either mode.
func isRecipes(name string) bool { return name == recipesName || name == oneShotName }

const participantID = "bench"

type recipesSession struct{ c *framework.Client }

func (s *recipesSession) Close() { _ = s.c.Close() }

func (s *recipesSession) Mutex(path string) (locker, error) {
	return mutex.New(s.c, path, mutex.WithID(participantID))
}

func (s *recipesSession) ReadLock(path string) (locker, error) {
	l, err := rwlock.New(s.c, path, rwlock.WithID(participantID))
	if err != nil {
		return nil, err
	}
	return l.ReadLock(), nil
}

func (s *recipesSession) WriteLock(path string) (locker, error) {
	l, err := rwlock.New(s.c, path, rwlock.WithID(participantID))
	if err != nil {
		return nil, err
	}
	return l.WriteLock(), nil
}

func (s *recipesSession) Semaphore(path string, leases int) (locker, error) {
	sem, err := semaphore.New(s.c, path, leases, semaphore.WithID(participantID))
	if err != nil {
		return nil, err
	}
	return &leaseLocker{s: sem}, nil
}

func (s *recipesSession) Latch(ctx context.Context, path string, onLeader func()) (candidate, error) {
	l, err := election.NewLatch(s.c, path, election.WithID(participantID))
	if err != nil {
		return nil, err
	}
	l.Listen(func(leads bool) {
		if leads {
			onLeader()
		}
	})
	if err := l.Start(ctx); err != nil {
		return nil, err
	}
	return l, nil
}

// leaseLocker takes one lease at a time.
type leaseLocker struct {
	s     *semaphore.Semaphore
	lease *semaphore.Lease
}

func (l *leaseLocker) Acquire(ctx context.Context) error {
	leases, err := l.s.Acquire(ctx, 1)
	if err != nil {
		return err
	}
	l.lease = leases[0]
	return nil
}

func (l *leaseLocker) Release(ctx context.Context) error { return l.lease.Release(ctx) }
