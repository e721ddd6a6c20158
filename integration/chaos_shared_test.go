package integration

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/zkrecipes/zkrecipes/recipes/shared"
)

// sharedWorkload has clients follow one shared count under the faults and set it
// now and then, each listener's record kept. Every listener must hear versions only
// grow, and once the faults are over every follower must end on the node's value.
type sharedWorkload struct {
	path    string
	clients []*chaosClient
	counts  []*shared.Count

	mu       sync.Mutex
	heard    [][]shared.Versioned[int32] // per client, in the order heard
	outcomes map[string]int
	problems []string
}

func newSharedWorkload(ctx context.Context, clients []*chaosClient) (*sharedWorkload, error) {
	w := &sharedWorkload{path: "/chaos/shared", clients: clients, heard: make([][]shared.Versioned[int32], len(clients)),
		outcomes: map[string]int{}}
	for i, cc := range clients {
		n, err := shared.NewCount(cc.c, w.path, 0)
		if err != nil {
			return nil, err
		}
		n.Listen(func(v shared.Versioned[int32]) {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.heard[i] = append(w.heard[i], v)
		})
		if err := n.Start(ctx); err != nil {
			return nil, fmt.Errorf("%s: %w", cc.name, err)
		}
		w.counts = append(w.counts, n)
	}
	return w, nil
}

// work sets the count, or tries to from the value it holds, every few tens of
// milliseconds until ctx ends.
func (w *sharedWorkload) work(ctx context.Context, i int, rng *rand.Rand) {
	n := w.counts[i]
	for pause(ctx, between(rng, 10*time.Millisecond, 60*time.Millisecond)) {
		octx, cancel := context.WithTimeout(ctx, 10*time.Second)
		v := rng.Int32N(1 << 20)
		if rng.Float64() < 0.5 {
			w.outcome("set", n.Set(octx, v))
		} else {
			ok, err := n.TrySet(octx, n.Get(), v)
			if err == nil && !ok {
				w.outcome("try-set", errors.New("false"))
			} else {
				w.outcome("try-set", err)
			}
		}
		cancel()
	}
}

func (w *sharedWorkload) outcome(kind string, err error) {
	what := "ok"
	switch {
	case err == nil && kind == "try-set":
		what = "true"
	case err == nil:
	case err.Error() == "false":
		what = "false (another write first)"
	case errors.Is(err, shared.ErrUnknownOutcome):
		what = "outcome unknown"
	case errors.Is(err, context.DeadlineExceeded):
		what = "timed out (10 s)"
	default:
		what = "failed"
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.outcomes[kind+" "+what]++
}

// finish reads the node once the faults are over, waits for every follower to get
// there, checks what each listener heard, and closes the counts and deletes the node.
func (w *sharedWorkload) finish(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	c := w.clients[0].c
	if err := c.Sync(ctx, w.path); err != nil {
		return fmt.Errorf("shared: the final read: %w", err)
	}
	data, stat, err := c.Get(ctx, w.path)
	if err != nil {
		return fmt.Errorf("shared: the final read: %w", err)
	}
	if len(data) != 4 {
		return fmt.Errorf("shared: the node holds %d bytes", len(data))
	}
	final := shared.Versioned[int32]{Value: int32(binary.BigEndian.Uint32(data)), Version: stat.Version}
	for i, n := range w.counts {
		for n.Get() != final && pause(ctx, 10*time.Millisecond) {
		}
		w.mu.Lock()
		w.problems = append(w.problems, followerProblems(w.clients[i].name, n.Get(), w.heard[i], final)...)
		w.mu.Unlock()
		_ = n.Close()
	}
	return c.Delete(ctx, w.path, -1)
}

func (w *sharedWorkload) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, h := range w.heard {
		n += len(h)
	}
	return fmt.Sprintf("shared count: %d followers (%s); %d values heard, every follower on the final value, versions only growing: %v",
		len(w.clients), sortedCounts(w.outcomes), n, len(w.problems) == 0)
}

// followerProblems checks one follower once the faults are over: its value is the
// node's, its listener heard that value last, and the versions it heard only grew.
func followerProblems(name string, got shared.Versioned[int32], heard []shared.Versioned[int32], final shared.Versioned[int32]) []string {
	var ps []string
	switch {
	case got != final:
		ps = append(ps, fmt.Sprintf("shared: %s ended on %v, the node holds %v", name, got, final))
	case len(heard) == 0 || heard[len(heard)-1] != final:
		ps = append(ps, fmt.Sprintf("shared: %s's listener did not hear the final %v", name, final))
	}
	for k := 1; k < len(heard); k++ {
		if heard[k].Version <= heard[k-1].Version {
			ps = append(ps, fmt.Sprintf("shared: %s's listener heard version %d after %d", name, heard[k].Version, heard[k-1].Version))
			break
		}
	}
	return ps
}
