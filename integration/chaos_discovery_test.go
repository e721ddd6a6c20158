package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/zkrecipes/zkrecipes/recipes/discovery"
)

// discoveryWatch is service discovery under the faults: each client registers one
// instance that it keeps (and updates now and then) and one that it unregisters
// during the run, and follows the service with a provider. Once the faults stop,
// every provider must know every kept instance, with its latest data, once, and
// none of those unregistered.
type discoveryWatch struct {
	kept, dropped []*discovery.Registration // one of each per client
	providers     []*discovery.Provider
	stops         []func()
	heard         chan struct{}

	mu      sync.Mutex
	latest  []string // the address last given to each kept instance
	updates int
	closed  int
	settled time.Duration
	problem string
	changes int
}

const discoveryBase, discoveryService = "/chaos/services", "chaos"

func newDiscoveryWatch(ctx context.Context, clients []*chaosClient) (*discoveryWatch, error) {
	dw := &discoveryWatch{heard: make(chan struct{}, 1<<16)}
	for _, cc := range clients {
		d, err := discovery.New(cc.c, discoveryBase)
		if err != nil {
			dw.close()
			return nil, err
		}
		kept, err := d.Register(ctx, discovery.Instance{Name: discoveryService, ID: cc.name, Address: cc.name + "-0"})
		if err == nil {
			dw.kept, dw.latest = append(dw.kept, kept), append(dw.latest, cc.name+"-0")
			var dropped *discovery.Registration
			dropped, err = d.Register(ctx, discovery.Instance{Name: discoveryService, ID: cc.name + "-dropped"})
			if err == nil {
				dw.dropped = append(dw.dropped, dropped)
			}
		}
		var p *discovery.Provider
		if err == nil {
			p, err = d.NewProvider(discoveryService)
		}
		if err == nil {
			dw.providers = append(dw.providers, p)
			dw.stops = append(dw.stops, p.Listen(func(e discovery.Event) {
				if e.Type == discovery.Added || e.Type == discovery.Updated || e.Type == discovery.Removed {
					dw.heard <- struct{}{}
				}
			}))
			err = p.Start(ctx)
		}
		if err != nil {
			dw.close()
			return nil, err
		}
	}
	return dw, nil
}

// work updates client i's kept instance now and then, and unregisters its other
// one at a random moment of the run.
func (dw *discoveryWatch) work(ctx context.Context, i int, rng *rand.Rand) {
	dropAt := time.Now().Add(between(rng, 0, 5*time.Second))
	for n := 1; pause(ctx, between(rng, 200*time.Millisecond, time.Second)); n++ {
		if time.Now().After(dropAt) {
			dw.drop(i)
		}
		in := dw.kept[i].Instance()
		in.Address = fmt.Sprintf("%s-%d", in.ID, n)
		dw.mu.Lock()
		dw.latest[i] = in.Address
		dw.updates++
		dw.mu.Unlock()
		// An Update whose context ends is still written once the node can be reached:
		// the latest address is the one the providers must end with.
		uctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_ = dw.kept[i].Update(uctx, in)
		cancel()
	}
}

// drop unregisters client i's instance that is not kept, if it is still there. A
// delete it cannot make now goes on in the background.
func (dw *discoveryWatch) drop(i int) {
	dw.mu.Lock()
	r := dw.dropped[i]
	if r != nil {
		dw.dropped[i] = nil
		dw.closed++
	}
	dw.mu.Unlock()
	if r != nil {
		_ = r.Close(context.Background())
	}
}

// wrong says how a provider's view differs from the kept instances, "" if none.
func (dw *discoveryWatch) wrong() string {
	dw.mu.Lock()
	want := map[string]string{}
	for i, r := range dw.kept {
		want[r.Instance().ID] = dw.latest[i]
	}
	dw.mu.Unlock()
	for k, p := range dw.providers {
		got := p.Instances()
		seen := map[string]string{}
		for _, in := range got {
			seen[in.ID] = in.Address
		}
		if len(got) != len(want) || !mapsEqual(seen, want) {
			var ids []string
			for _, in := range got {
				ids = append(ids, in.ID+"@"+in.Address)
			}
			slices.Sort(ids)
			return fmt.Sprintf("provider %d knows %v, not %v", k, ids, want)
		}
	}
	return ""
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// settle waits, once the faults have stopped (at stopped), until every provider is
// exact.
func (dw *discoveryWatch) settle(ctx context.Context, stopped time.Time) {
	for i := range dw.dropped { // those the run did not reach
		dw.drop(i)
	}
	settled, problem := settleAfter(ctx, stopped, 20*time.Millisecond, func() string {
		if w := dw.wrong(); w != "" {
			return fmt.Sprintf("not exact %v after the faults stopped: %s", wait, w)
		}
		return ""
	})
	dw.mu.Lock()
	dw.settled, dw.problem = settled, problem
	dw.mu.Unlock()
}

func (dw *discoveryWatch) close() {
	for _, stop := range dw.stops {
		stop()
	}
	for _, p := range dw.providers {
		_ = p.Close(context.Background())
	}
	for i := range dw.dropped {
		dw.drop(i)
	}
	for _, r := range dw.kept {
		_ = r.Close(context.Background())
	}
	dw.changes = len(dw.heard)
}

func (dw *discoveryWatch) problems() []string {
	dw.mu.Lock()
	defer dw.mu.Unlock()
	if dw.problem == "" {
		return nil
	}
	return []string{"discovery: " + dw.problem}
}

func (dw *discoveryWatch) report() string {
	dw.mu.Lock()
	defer dw.mu.Unlock()
	if dw.problem != "" {
		return "discovery: " + dw.problem + "\n"
	}
	return fmt.Sprintf("discovery: %d instances kept (%d updates) and %d unregistered; %d providers heard %d changes; "+
		"every provider knew every kept instance once, with its latest data, and no unregistered one, within %v of the faults stopping\n",
		len(dw.kept), dw.updates, dw.closed, len(dw.providers), dw.changes, dw.settled.Round(time.Millisecond))
}
