package participants

import (
	"context"
	"errors"
	"fmt"
	"path"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/cache"
)

// Reader is where Read reads nodes: the server (FromClient) or a cache's copy of it
// (FromCache).
type Reader interface {
	// Children lists p's children; none, and no error, when p does not exist (an
	// idle lock's container parent is deleted).
	Children(ctx context.Context, p string) ([]string, error)
	// Get reads p's data and stat; an error wrapping framework.ErrNoNode when p does not
	// exist.
	Get(ctx context.Context, p string) ([]byte, *framework.Stat, error)
}

// FromClient reads from ZooKeeper through c, a request per call.
func FromClient(c *framework.Client) Reader { return client{c} }

type client struct{ c *framework.Client }

func (r client) Children(ctx context.Context, p string) ([]string, error) {
	names, _, err := r.c.Children(ctx, p)
	if errors.Is(err, framework.ErrNoNode) {
		return nil, nil
	}
	return names, err
}

func (r client) Get(ctx context.Context, p string) ([]byte, *framework.Stat, error) {
	return r.c.Get(ctx, p)
}

// FromCache reads from ca's copy, without a request; ca must cache the nodes read
// (their parent's path at a Depth that reaches them).
func FromCache(ca *cache.Cache) Reader { return cached{ca} }

type cached struct{ ca *cache.Cache }

func (r cached) Children(_ context.Context, p string) ([]string, error) {
	return r.ca.Children(p), nil
}

func (r cached) Get(_ context.Context, p string) ([]byte, *framework.Stat, error) {
	n, ok := r.ca.Get(p)
	if !ok {
		return nil, nil, fmt.Errorf("participants: %s: %w", p, framework.ErrNoNode)
	}
	st := n.Stat
	return n.Data, &st, nil
}

// Read lists the participants at p with layout l, in queue order, each with its id
// and stat, and who holds. A node that left while Read listed is left out, and the
// rule decides on those that remain: the one that left has passed its place on.
// Cancelling ctx ends Read with an error wrapping ctx.Err(); it writes nothing.
func Read(ctx context.Context, r Reader, p string, l Layout) ([]Participant, error) {
	children, err := r.Children(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("participants: %s: %w", p, err)
	}
	found := map[string]Participant{}
	var names []string
	for _, q := range Order(children, l) {
		q.Path = path.Join(p, q.Name)
		data, st, err := r.Get(ctx, q.Path)
		if errors.Is(err, framework.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("participants: %s: %w", q.Path, err)
		}
		q.ID, q.Stat = string(data), *st
		found[q.Name] = q
		names = append(names, q.Name)
	}
	ps := Order(names, l)
	for i, q := range ps {
		f := found[q.Name]
		f.Holds = q.Holds
		ps[i] = f
	}
	return ps, nil
}

// The directories of a counting semaphore (Curator's InterProcessSemaphoreV2).
const (
	leasesDir = "leases"
	locksDir  = "locks"
)

// IsSemaphore tells whether children, a listing of a path, are a counting
// semaphore's directories.
func IsSemaphore(children []string) bool {
	for _, c := range children {
		if c == leasesDir || c == locksDir {
			return true
		}
	}
	return false
}

// ReadSemaphore lists the counting semaphore at p (semaphore.Semaphore, Curator's
// InterProcessSemaphoreV2): the lease nodes of p/leases in order, then the
// acquirers queued on p/locks, none of which holds a lease (the first of them holds
// the semaphore's internal lock while it waits for one). leases is the semaphore's
// number of leases, which ZooKeeper does not store: with leases < 1 every lease node
// holds, except one, while someone waits: the first of p/locks counts the leases
// with a lease node of its own, its session's newest, which does not hold yet.
// Cancelling ctx ends ReadSemaphore with an error wrapping ctx.Err().
func ReadSemaphore(ctx context.Context, r Reader, p string, leases int) ([]Participant, error) {
	held, err := Read(ctx, r, path.Join(p, leasesDir), Leases(leases))
	if err != nil {
		return nil, err
	}
	queued, err := Read(ctx, r, path.Join(p, locksDir), Mutex)
	if err != nil {
		return nil, err
	}
	for i := range queued {
		queued[i].Holds = false
	}
	if leases < 1 && len(queued) > 0 {
		counting := -1
		for i, q := range held {
			if q.Stat.EphemeralOwner == queued[0].Stat.EphemeralOwner {
				counting = i
			}
		}
		if counting >= 0 {
			held[counting].Holds = false
		}
	}
	return append(held, queued...), nil
}
