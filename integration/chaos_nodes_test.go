package integration

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/zkrecipes/zkrecipes/recipes/nodes"
)

// nodeWatch keeps a PersistentNode per client under the faults, one of each kind
// (ephemeral, protected and sequential, persistent), each given new data now and
// then. Once the faults stop every node must be back in place: at the path it was
// first made at, with the last data given to it, and, if ephemeral, owned by its
// client's current session.
type nodeWatch struct {
	clients []*chaosClient
	kinds   []string
	nodes   []*nodes.PersistentNode
	paths   []string // each node's actual path, as Start made it

	mu       sync.Mutex
	data     []string       // the last data given to each node
	outcomes map[string]int // SetData's
	placed   int            // the listeners' Present events
	gone     int            // and their absences
	settled  time.Duration  // from the end of the faults until every node was in place
	problem  string
}

const nodesPath = "/chaos/nodes"

func newNodeWatch(ctx context.Context, clients []*chaosClient) (*nodeWatch, error) {
	nw := &nodeWatch{clients: clients, outcomes: map[string]int{}}
	for i, cc := range clients {
		kind, path, opts := "ephemeral", nodesPath+"/"+cc.name, []nodes.Option(nil)
		switch i % 3 {
		case 1:
			kind, path, opts = "protected sequential", path+"-", []nodes.Option{nodes.Protected(), nodes.Sequential()}
		case 2:
			kind, opts = "persistent", []nodes.Option{nodes.Persistent()}
		}
		data := cc.name + " #0"
		p, err := nodes.New(cc.c, path, []byte(data), opts...)
		if err == nil {
			p.Listen(func(ev nodes.Event) {
				nw.mu.Lock()
				defer nw.mu.Unlock()
				if ev.Present {
					nw.placed++
				} else {
					nw.gone++
				}
			})
			err = p.Start(ctx)
		}
		if err != nil {
			nw.close(ctx)
			return nil, fmt.Errorf("%s: %w", cc.name, err)
		}
		nw.kinds, nw.nodes, nw.paths, nw.data = append(nw.kinds, kind), append(nw.nodes, p), append(nw.paths, p.Path()), append(nw.data, data)
	}
	return nw, nil
}

// work gives node i new data every few hundred milliseconds until ctx ends. The data
// given counts as the node's latest whatever SetData returns: a SetData cut short
// keeps the data for when the node can be reached.
func (nw *nodeWatch) work(ctx context.Context, i int, rng *rand.Rand) {
	for k := 1; pause(ctx, between(rng, 50*time.Millisecond, 300*time.Millisecond)); k++ {
		data := fmt.Sprintf("%s #%d", nw.clients[i].name, k)
		nw.mu.Lock()
		nw.data[i] = data
		nw.mu.Unlock()
		octx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := nw.nodes[i].SetData(octx, []byte(data))
		cancel()
		what := "ok"
		switch {
		case err == nil:
		case errors.Is(err, context.DeadlineExceeded):
			what = "timed out (10 s)"
		case errors.Is(err, context.Canceled):
			what = "cut short by the run's end"
		default:
			what = "failed"
		}
		nw.mu.Lock()
		nw.outcomes[what]++
		nw.mu.Unlock()
	}
}

// misplaced says what is wrong with node i now, "" if it is in place.
func (nw *nodeWatch) misplaced(ctx context.Context, i int) string {
	c := nw.clients[i].c
	if got := nw.nodes[i].Path(); got != nw.paths[i] {
		return fmt.Sprintf("%s's node is at %q, first made at %q", nw.clients[i].name, got, nw.paths[i])
	}
	octx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	data, stat, err := c.Get(octx, nw.paths[i])
	if err != nil {
		return fmt.Sprintf("%s: %v", nw.paths[i], err)
	}
	nw.mu.Lock()
	want := nw.data[i]
	nw.mu.Unlock()
	owner := int64(0) // persistent
	if nw.kinds[i] != "persistent" {
		owner = c.SessionID()
	}
	switch {
	case string(data) != want:
		return fmt.Sprintf("%s holds %q, not the latest %q", nw.paths[i], data, want)
	case stat.EphemeralOwner != owner:
		return fmt.Sprintf("%s is owned by session %#x, not %#x", nw.paths[i], stat.EphemeralOwner, owner)
	}
	return ""
}

// settle waits, once the faults have stopped (at stopped), until every node is in
// place.
func (nw *nodeWatch) settle(ctx context.Context, stopped time.Time) {
	settled, problem := settleAfter(ctx, stopped, 20*time.Millisecond, func() string {
		var wrong []string
		for i := range nw.nodes {
			if w := nw.misplaced(ctx, i); w != "" {
				wrong = append(wrong, w)
			}
		}
		if len(wrong) == 0 {
			return ""
		}
		return fmt.Sprintf("not in place %v after the faults stopped: %v", wait, wrong)
	})
	nw.mu.Lock()
	nw.settled, nw.problem = settled, problem
	nw.mu.Unlock()
}

// close closes the nodes, which deletes them.
func (nw *nodeWatch) close(ctx context.Context) {
	closeAll(ctx, nw.nodes)
}

func (nw *nodeWatch) report() string {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	if nw.problem != "" {
		return "persistent nodes: " + nw.problem + "\n"
	}
	return fmt.Sprintf("persistent nodes: %d kept %v; SetData %s; found gone %d times and made again %d times; "+
		"every node back at its first path with its latest data (ephemeral ones in their client's current session) within %v of the faults stopping\n",
		len(nw.nodes), nw.kinds, sortedCounts(nw.outcomes), nw.gone, nw.placed-len(nw.nodes), nw.settled.Round(time.Millisecond))
}

func (nw *nodeWatch) problems() []string {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	if nw.problem == "" {
		return nil
	}
	return []string{"persistent nodes: " + nw.problem}
}
