package integration

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
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
	heard    [][]heardValue // per client, in the order heard
	outcomes map[string]int
	problems []string
	losses   []serverLoss
}

// heardValue is a value a follower's listener heard, and when.
type heardValue struct {
	v  shared.Versioned[int32]
	at time.Time
}

func newSharedWorkload(ctx context.Context, clients []*chaosClient) (*sharedWorkload, error) {
	w := &sharedWorkload{path: "/chaos/shared", clients: clients, heard: make([][]heardValue, len(clients)),
		outcomes: map[string]int{}}
	for i, cc := range clients {
		n, err := shared.NewCount(cc.c, w.path, 0)
		if err != nil {
			return nil, err
		}
		n.Listen(func(v shared.Versioned[int32]) {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.heard[i] = append(w.heard[i], heardValue{v, time.Now()})
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
	names := make([]string, len(w.counts))
	for i, n := range w.counts {
		for n.Get() != final && pause(ctx, 10*time.Millisecond) {
		}
		names[i] = w.clients[i].name
		w.mu.Lock()
		w.problems = append(w.problems, followerProblems(names[i], n.Get(), w.heard[i], final)...)
		w.mu.Unlock()
		_ = n.Close(context.Background())
	}
	w.mu.Lock()
	losses, problems := wentBack(w.path, names, w.heard)
	w.losses, w.problems = losses, append(w.problems, problems...)
	w.mu.Unlock()
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
		len(w.clients), sortedCounts(w.outcomes), n, len(w.problems) == 0 && len(w.losses) == 0)
}

// followerProblems checks one follower once the faults are over: its value is the
// node's, and its listener heard that value last. wentBack checks the versions.
func followerProblems(name string, got shared.Versioned[int32], heard []heardValue, final shared.Versioned[int32]) []string {
	switch {
	case got != final:
		return []string{fmt.Sprintf("shared: %s ended on %v, the node holds %v", name, got, final)}
	case len(heard) == 0 || heard[len(heard)-1].v != final:
		return []string{fmt.Sprintf("shared: %s's listener did not hear the final %v", name, final)}
	}
	return nil
}

// wentBack checks that the versions each follower heard only grew. A follower hears
// a value only if its mzxid is later than the last one's, so when every follower
// hears the version go back within lossWindow of the first that does, the servers
// served a later write on an older history: a server loss. A step back that not
// every follower heard is the recipe's failure.
func wentBack(node string, names []string, heard [][]heardValue) (losses []serverLoss, problems []string) {
	type step struct {
		follower int
		from, to heardValue
	}
	var steps []step
	for i, h := range heard {
		for k := 1; k < len(h); k++ {
			if h[k].v.Version <= h[k-1].v.Version {
				steps = append(steps, step{i, h[k-1], h[k]})
			}
		}
	}
	slices.SortFunc(steps, func(a, b step) int { return a.to.at.Compare(b.to.at) })
	for len(steps) > 0 {
		n := 1
		for n < len(steps) && steps[n].to.at.Sub(steps[0].to.at) <= lossWindow {
			n++
		}
		group := steps[:n]
		steps = steps[n:]
		who := map[int]bool{}
		var seen []string
		for _, s := range group {
			who[s.follower] = true
			seen = append(seen, fmt.Sprintf("%s heard version %d after %d at %s", names[s.follower], s.to.v.Version, s.from.v.Version, s.to.at.Format(stamp)))
		}
		if len(who) == len(heard) {
			from := slices.MinFunc(group, func(a, b step) int { return a.from.at.Compare(b.from.at) }).from.at
			losses = append(losses, serverLoss{node: node, from: from, to: group[len(group)-1].to.at,
				evidence: "every follower heard the version go back: " + strings.Join(seen, "; ")})
			continue
		}
		for _, s := range seen {
			problems = append(problems, "shared: "+s+" (not every follower did: the recipe's failure)")
		}
	}
	return losses, problems
}

// lossWindow is how far apart the followers may hear one loss: a follower cut off
// hears it once it reads again, within a session timeout and a few seconds.
const lossWindow = 30 * time.Second
