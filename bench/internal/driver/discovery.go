package driver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkrecipes/zkrecipes/recipes/discovery"
)

// The service discovery scenarios (issue 25), beside Curator's curator-x-discovery.
// Optional: `-only discovery-register,discovery-load,discovery-pick`.
const (
	// discoveryRegister: a provider follows a service of Nodes instances (registered
	// beforehand by the second session, untimed) while that session registers
	// Cycles more, one at a time; each latency is from the call to
	// register until the provider knows the instance (polled every pollEvery, as
	// Curator's cache has no per-instance event); each is then unregistered, untimed,
	// until the provider has let it go.
	discoveryRegister kind = "discovery-register"
	// discoveryLoad: Nodes instances are registered (untimed), then a provider of the
	// service starts; Heap is per instance it knows.
	discoveryLoad kind = "discovery-load"
	// discoveryPick: a provider of a service of Nodes instances picks one, round
	// robin, on pickers goroutines (threads) for Duration.
	discoveryPick kind = "discovery-pick"
)

const (
	discoveryName = "svc" // the service's name, under the workload's path
	pickers       = 4
)

func discoveryScenarios(s Settings) []scenario {
	who := []string{recipesName, curatorName}
	return []scenario{{
		id: "discovery-register",
		title: fmt.Sprintf("Discovery register-to-seen: %d instances registered one at a time, until another session's provider "+
			"knows each (then unregistered, until it is gone)", s.Rounds),
		work: workload{Kind: discoveryRegister, Cycles: s.Rounds}, who: who, optional: true,
		metrics: []metric{
			latencyMetric("discovery-register-p50", "discovery register-to-seen, p50 (ms)", 50, millis, fmtFloat2),
			latencyMetric("discovery-register-p99", "discovery register-to-seen, p99 (ms)", 99, millis, fmtFloat2),
			{id: "discovery-register-requests", label: "discovery: requests per registration seen and unregistration seen", format: fmtFloat2,
				value: func(m measurement) float64 { return float64(m.Packets) / float64(m.Res.Total) }},
		},
	}, {
		id:    "discovery-load",
		title: "Discovery load: a provider starts on a service of 1000 instances; heap per instance known (ours after a collection; the peer JVM's used heap after System.gc())",
		work:  workload{Kind: discoveryLoad, Nodes: 1000}, who: who, optional: true,
		metrics: []metric{
			{id: "discovery-load-time", label: "discovery: provider start on 1000 instances (ms)", format: fmtFloat1,
				value: func(m measurement) float64 { return millis(m.Res.Elapsed) }},
			{id: "discovery-load-requests", label: "discovery: provider start, requests", format: fmtInt,
				value: func(m measurement) float64 { return float64(m.Packets) }},
			{id: "discovery-load-heap", label: "discovery: heap per instance known (bytes)", format: fmtInt,
				value: func(m measurement) float64 { return orNaN(m.Res.Heap) }},
		},
	}, {
		id:    "discovery-pick",
		title: fmt.Sprintf("Discovery pick: %d goroutines (threads) pick from a provider of 10 instances, round robin, for %v", pickers, s.Duration),
		work:  workload{Kind: discoveryPick, Nodes: 10, Duration: s.Duration}, who: who, optional: true,
		metrics: []metric{
			rateMetric("discovery-pick-rate", "discovery: picks per second", func(r result) int { return r.Ops }),
		},
	}}
}

// discoveryCommand is a discovery workload as the Curator peer reads it.
func discoveryCommand(w workload) (string, error) {
	switch w.Kind {
	case discoveryRegister:
		return fmt.Sprintf("%s %s %d %d", w.Kind, w.Path, w.Cycles, w.Nodes), nil
	case discoveryLoad:
		return fmt.Sprintf("%s %s %d", w.Kind, w.Path, w.Nodes), nil
	case discoveryPick:
		return fmt.Sprintf("%s %s %d %d", w.Kind, w.Path, w.Nodes, w.Duration.Milliseconds()), nil
	}
	return "", fmt.Errorf("%w: %s", errUnsupported, w.Kind)
}

// discoveryTrial is one prepared discovery workload of zkrecipes: a provider on one
// session, registrations on another.
type discoveryTrial struct {
	w              workload
	s, registrar   *recipesSession
	reader, writer *discovery.Discovery
	provider       *discovery.Provider
	regs           []*discovery.Registration
	heap           float64 // the provider's, per instance it knows; 0 when none
}

// prepareDiscovery prepares w when it is a discovery workload (ok).
func (g *goContender) prepareDiscovery(ctx context.Context, w workload) (t trial, ok bool, err error) {
	switch w.Kind {
	case discoveryRegister, discoveryLoad, discoveryPick:
	default:
		return nil, false, nil
	}
	if !isRecipes(g.name) {
		return nil, true, errUnsupported
	}
	dt := &discoveryTrial{w: w}
	if err := dt.prepare(ctx, g); err != nil {
		dt.Close()
		return nil, true, err
	}
	return dt, true, nil
}

func (t *discoveryTrial) prepare(ctx context.Context, g *goContender) error {
	ss, err := g.dialAll(ctx, 2)
	if err != nil {
		return err
	}
	t.s, t.registrar = ss[0].(*recipesSession), ss[1].(*recipesSession)
	if t.reader, err = discovery.New(t.s.c, t.w.Path); err != nil {
		return err
	}
	if t.writer, err = discovery.New(t.registrar.c, t.w.Path); err != nil {
		return err
	}
	for i := range t.w.Nodes {
		if err := t.register(ctx, fmt.Sprintf("i%d", i)); err != nil {
			return err
		}
	}
	if t.w.Kind == discoveryLoad {
		return nil
	}
	_, err = t.startProvider(ctx)
	return err
}

// startProvider starts the provider of the service and returns once it knows every
// instance registered; heap is what it took, per instance it knows.
func (t *discoveryTrial) startProvider(ctx context.Context) (elapsed time.Duration, err error) {
	_, heap0 := footprint()
	start := time.Now()
	if t.provider, err = t.reader.NewProvider(discoveryName); err != nil {
		return 0, err
	}
	if err := t.provider.Start(ctx); err != nil {
		return 0, err
	}
	elapsed = time.Since(start)
	_, heap1 := footprint()
	if n := len(t.provider.Instances()); n != t.w.Nodes {
		return 0, fmt.Errorf("the provider knows %d instances, not %d", n, t.w.Nodes)
	}
	if t.w.Nodes > 0 {
		t.heap = (float64(heap1) - float64(heap0)) / float64(t.w.Nodes)
	}
	return elapsed, nil
}

func (t *discoveryTrial) register(ctx context.Context, id string) error {
	r, err := t.writer.Register(ctx, discovery.Instance{Name: discoveryName, ID: id, Address: "10.0.0.1", Port: 8080,
		URISpec: "{scheme}://{address}:{port}"})
	if err == nil {
		t.regs = append(t.regs, r)
	}
	return err
}

func (t *discoveryTrial) Close() {
	if t.provider != nil {
		_ = t.provider.Close(context.Background())
	}
	for _, r := range t.regs {
		_ = r.Close(context.Background())
	}
	for _, s := range []*recipesSession{t.registrar, t.s} {
		if s != nil {
			s.Close()
		}
	}
}

func (t *discoveryTrial) Run(ctx context.Context, _ func(context.Context) error) (result, error) {
	switch t.w.Kind {
	case discoveryRegister:
		return t.registerToSeen(ctx)
	case discoveryLoad:
		return t.load(ctx)
	}
	return t.pick(ctx)
}

func (t *discoveryTrial) knows(id string) bool {
	return slices.ContainsFunc(t.provider.Instances(), func(in discovery.Instance) bool { return in.ID == id })
}

func (t *discoveryTrial) registerToSeen(ctx context.Context) (result, error) {
	lat := make([]time.Duration, t.w.Cycles)
	start := time.Now()
	for i := range lat {
		id := fmt.Sprintf("r%d", i)
		t0 := time.Now()
		registered := make(chan error, 1)
		var r *discovery.Registration
		go func() {
			var err error
			r, err = t.writer.Register(ctx, discovery.Instance{Name: discoveryName, ID: id, Address: "10.0.0.1", Port: 8080,
				URISpec: "{scheme}://{address}:{port}"})
			registered <- err
		}()
		err := pollUntil(ctx, func() bool { return t.knows(id) })
		lat[i] = time.Since(t0)
		if err = errors.Join(err, <-registered); err == nil {
			err = r.Close(context.Background())
		}
		if err == nil {
			err = pollUntil(ctx, func() bool { return !t.knows(id) })
		}
		if err != nil {
			return result{}, err
		}
	}
	n := len(lat)
	return result{Ops: n, Total: n, Elapsed: time.Since(start), Latencies: lat, Heap: t.heap, Changer: t.registrar.c.SessionID()}, nil
}

func (t *discoveryTrial) load(ctx context.Context) (result, error) {
	elapsed, err := t.startProvider(ctx)
	if err != nil {
		return result{}, err
	}
	n := t.w.Nodes
	return result{Ops: n, Total: n, Elapsed: elapsed, Heap: t.heap}, nil
}

func (t *discoveryTrial) pick(ctx context.Context) (result, error) {
	var picks atomic.Int64
	var failed error
	var once sync.Once
	deadline := time.Now().Add(t.w.Duration)
	start := time.Now()
	var wg sync.WaitGroup
	for range pickers {
		wg.Go(func() {
			for n := 0; ctx.Err() == nil; n++ {
				if n%256 == 0 && time.Now().After(deadline) {
					return
				}
				if _, err := t.provider.Pick(); err != nil {
					once.Do(func() { failed = err })
					return
				}
				picks.Add(1)
			}
		})
	}
	wg.Wait()
	n := int(picks.Load())
	return result{Ops: n, Total: n, Elapsed: time.Since(start)}, failed
}
