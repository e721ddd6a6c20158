package integration

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/recipes/cache"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// cacheConvergence is how soon after the faults stop every cache must hold the
// server's tree.
const cacheConvergence = 10 * time.Second

// cacheWatch is the chaos run's cache line: caches on clients under the faults
// follow a tree that a writer, under the same faults, keeps changing. Each listener's
// history is checked as it is heard; once the faults stop and the writer is done,
// every copy must equal the server's tree within cacheConvergence.
type cacheWatch struct {
	path      string
	writer    *chaosClient
	leaves    []string
	caches    []*cache.Cache
	histories []*zkrtest.CacheHistory
	changes   atomic.Int64
	suspended atomic.Int64 // Suspended and Lost events the caches heard: the faults that reached them
	lost      atomic.Int64
	converged []time.Duration // per cache, since the faults stopped; -1 never
	problems  []string
}

func newCacheWatch(ctx context.Context, writer *chaosClient, followers []*chaosClient) (*cacheWatch, error) {
	cw := &cacheWatch{path: "/chaos/cache", writer: writer}
	for d := range 4 {
		for n := range 5 {
			p := fmt.Sprintf("%s/d%d/n%d", cw.path, d, n)
			if _, err := writer.c.Create(ctx, p, nil, framework.CreatingParents()); err != nil {
				return nil, err
			}
			cw.leaves = append(cw.leaves, p)
		}
	}
	for _, cc := range followers {
		ca, err := cache.New(cc.c, cw.path)
		if err != nil {
			return nil, err
		}
		h := zkrtest.NewCacheHistory(cw.path)
		ca.Listen(func(ev cache.Event) {
			h.Hear(ev.Type.String(), ev.Path, cachedNode(ev.Old), cachedNode(ev.New))
			switch ev.Type {
			case cache.Suspended:
				cw.suspended.Add(1)
			case cache.Lost:
				cw.lost.Add(1)
			}
		})
		cw.caches, cw.histories = append(cw.caches, ca), append(cw.histories, h)
		if err := ca.Start(ctx); err != nil {
			return nil, fmt.Errorf("%s: %w", cc.name, err)
		}
	}
	return cw, nil
}

func cachedNode(n cache.Node) zkrtest.CachedNode {
	return zkrtest.CachedNode{Path: n.Path, Data: n.Data, Czxid: n.Stat.Czxid, Mzxid: n.Stat.Mzxid, Version: n.Stat.Version}
}

// write changes the leaves until ctx ends: sets, deletes, creates, and deletes and
// creates in one transaction. Failures under faults are expected and ignored.
func (cw *cacheWatch) write(ctx context.Context, rng *rand.Rand) {
	for i := 0; pause(ctx, 10*time.Millisecond); i++ {
		p := cw.leaves[rng.IntN(len(cw.leaves))]
		data := []byte(fmt.Sprint(i))
		opCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
		var err error
		switch r := rng.IntN(10); {
		case r < 6:
			_, err = cw.writer.c.Set(opCtx, p, data, -1)
		case r < 8:
			err = cw.writer.c.Delete(opCtx, p, -1)
		case r < 9:
			_, err = cw.writer.c.Create(opCtx, p, data)
		default:
			_, err = cw.writer.c.Multi(opCtx, framework.DeleteOp(p, -1), framework.CreateOp(p, data))
		}
		cancel()
		if err == nil {
			cw.changes.Add(1)
		}
	}
}

// settle waits, once the faults have stopped, for every copy to equal the server's
// tree, and records how long each took.
func (cw *cacheWatch) settle(ctx context.Context, e *zktest.Ensemble) {
	stopped := time.Now()
	c, err := framework.New(e.Addrs())
	if err != nil {
		cw.problems = append(cw.problems, err.Error())
		return
	}
	defer c.Close()
	var want []string
	if err = c.WaitConnected(ctx); err == nil {
		if err = c.Sync(ctx, cw.path); err == nil {
			want, err = treeOf(ctx, c, cw.path)
		}
	}
	if err != nil {
		cw.problems = append(cw.problems, "reading the server's tree: "+err.Error())
		return
	}
	for i, ca := range cw.caches {
		cw.converged = append(cw.converged, -1)
		for time.Since(stopped) < cacheConvergence+wait {
			if slices.Equal(want, copyLines(ca.Nodes())) {
				cw.converged[i] = time.Since(stopped)
				break
			}
			if !pause(ctx, 20*time.Millisecond) {
				break
			}
		}
		switch d := cw.converged[i]; {
		case d < 0:
			cw.problems = append(cw.problems, fmt.Sprintf("cache %d never held the server's tree", i))
		case d > cacheConvergence:
			cw.problems = append(cw.problems, fmt.Sprintf("cache %d held the server's tree only %v after the faults stopped", i, d.Round(time.Millisecond)))
		}
	}
	for i, h := range cw.histories {
		for _, v := range h.Violations() {
			cw.problems = append(cw.problems, fmt.Sprintf("cache %d: %s", i, v))
		}
	}
}

// close closes the caches and deletes the tree, which is nobody's once the run is
// over.
func (cw *cacheWatch) close(ctx context.Context) {
	for _, ca := range cw.caches {
		_ = ca.Close(context.Background())
	}
	for _, p := range cw.leaves {
		if err := cw.writer.c.Delete(ctx, p, -1); err != nil && !errors.Is(err, framework.ErrNoNode) {
			cw.problems = append(cw.problems, "deleting the tree: "+err.Error())
		}
	}
	for d := range 4 {
		_ = cw.writer.c.Delete(ctx, fmt.Sprintf("%s/d%d", cw.path, d), -1)
	}
	_ = cw.writer.c.Delete(ctx, cw.path, -1)
}

func (cw *cacheWatch) report() string {
	heard := 0
	for _, h := range cw.histories {
		heard += h.Heard()
	}
	ds := slices.Clone(cw.converged)
	slices.Sort(ds)
	conv := "never"
	if len(ds) > 0 && ds[0] >= 0 {
		conv = fmt.Sprintf("a median %v, at most %v", ds[len(ds)/2].Round(time.Millisecond), ds[len(ds)-1].Round(time.Millisecond))
	}
	return fmt.Sprintf("caches: %d following %s through %d changes by a writer under the same faults; they heard %d events, "+
		"%d Suspended and %d Lost; each held the server's tree %s after the faults stopped (allowed: %v)\n",
		len(cw.caches), cw.path, cw.changes.Load(), heard, cw.suspended.Load(), cw.lost.Load(), conv, cacheConvergence)
}

// treeOf lists a subtree as copyLines does a copy.
func treeOf(ctx context.Context, c *framework.Client, root string) ([]string, error) {
	var nodes []cache.Node
	var visit func(p string) error
	visit = func(p string) error {
		data, st, err := c.Get(ctx, p)
		if errors.Is(err, framework.ErrNoNode) {
			return nil
		} else if err != nil {
			return err
		}
		nodes = append(nodes, cache.Node{Path: p, Data: data, Stat: *st})
		names, _, err := c.Children(ctx, p)
		if errors.Is(err, framework.ErrNoNode) {
			return nil
		} else if err != nil {
			return err
		}
		for _, n := range names {
			if err := visit(p + "/" + n); err != nil {
				return err
			}
		}
		return nil
	}
	if err := visit(root); err != nil {
		return nil, err
	}
	return copyLines(nodes), nil
}

// copyLines writes nodes as sorted lines of path, czxid, mzxid, version and data.
func copyLines(nodes []cache.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = fmt.Sprintf("%s %d %d %d %q", n.Path, n.Stat.Czxid, n.Stat.Mzxid, n.Stat.Version, n.Data)
	}
	slices.Sort(out)
	return out
}
