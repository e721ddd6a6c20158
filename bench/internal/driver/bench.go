// Package driver is the benchmark behind `make bench` (bench/main.go): it measures
// zkrecipes against the raw ZooKeeper operations its recipes need (the limit),
// go-zookeeper's own zk.Lock and Apache Curator (through the Java peer in
// bench/curator-peer), on one ZooKeeper server in one run, and tabulates the figures.
//
// Each scenario runs every contender it applies to several times, in alternation
// (A B C D A B C D), and reports medians. Requests are counted by the server (mntr's
// zk_packets_received, read before and after each measured part, less the driver's
// own four-letter words), watches by wchs and wchp. The server is a throwaway one
// started by zktest, or the first of ZK_SERVERS, which must be on loopback. Every
// run is bounded in time.
package driver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"time"
)

// Config is what `make bench` asks for.
type Config struct {
	Settings
	Contenders []string // by name; default AllContenders
	Only       []string // scenario ids; default all
	Peer       string   // directory of CuratorPeer.class
	Kazoo      string   // kazoo's peer, bench/kazoo-peer/kazoo_peer.py
	PeerHeapMB int      // the Curator peer's maximum heap; 0 for javaFlags' default
}

// RecipeScenarios are the ids of the scenarios of the cache, group, counter and
// partition recipes, which run only when asked for.
func RecipeScenarios() []string {
	var ids []string
	for _, s := range scenarios(Settings{Rounds: 1}) {
		if s.optional {
			ids = append(ids, s.id)
		}
	}
	return ids
}

// Run starts the server and the contenders, runs the scenarios and returns what
// they measured. Failed trials are in the report; Run fails only when nothing could
// be measured at all.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	started := time.Now()
	if len(cfg.Contenders) == 0 {
		cfg.Contenders = AllContenders
	}
	cpu0 := sampleCPU()
	Say("starting ZooKeeper")
	tg, err := startTarget(ctx, cfg.Members, 0)
	if err != nil {
		return nil, err
	}
	defer tg.Close()
	Say("ZooKeeper %s at %s", tg.version(ctx), tg.addr)

	addr := tg.addr
	if cfg.Delay > 0 {
		p, err := startDelayProxy(tg.addr, cfg.Delay)
		if err != nil {
			return nil, err
		}
		defer p.Close()
		addr = p.Addr()
		if cfg.RoundTrip, err = calibrate(ctx, addr); err != nil {
			return nil, fmt.Errorf("timing a request through the delaying proxy: %w", err)
		}
		Say("through a proxy adding %v each way: one request takes %v", cfg.Delay, cfg.RoundTrip)
	}
	cs, err := startContenders(ctx, cfg, addr)
	for _, c := range cs {
		defer c.Close()
	}
	if err != nil {
		return nil, err
	}

	b := &bench{tg: tg, contenders: cs, results: map[string]map[string][]measurement{}}
	b.warmUp(ctx, cfg.WarmupTime)
	var ran []scenario
	for _, s := range scenarios(cfg.Settings) {
		if (len(cfg.Only) > 0 || s.optional) && !slices.Contains(cfg.Only, s.id) {
			continue
		}
		b.scenario(ctx, s, cfg.Runs)
		ran = append(ran, s)
		if ctx.Err() != nil {
			break
		}
	}
	rep := b.report(ctx, cfg.Settings, ran, time.Since(started))
	cpu1 := sampleCPU()
	rep.Machine = append(rep.Machine, [2]string{"other load", fmt.Sprintf(
		"processes other than the benchmark's own kept %.0f%% of the CPUs busy during the run (load average %s at the start, %s at the end)",
		100*othersBusy(cpu0, cpu1), cpu0.loadavg, cpu1.loadavg)})
	return rep, ctx.Err()
}

var t0 = time.Now()

// Say logs progress on stderr.
func Say(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[%6.1fs] %s\n", time.Since(t0).Seconds(), fmt.Sprintf(format, args...))
}

func startContenders(ctx context.Context, cfg Config, addr string) ([]contender, error) {
	var cs []contender
	for _, name := range cfg.Contenders {
		switch name {
		case limitName:
			cs = append(cs, newLimit(addr))
		case zkLockName:
			cs = append(cs, newZKLock(addr))
		case recipesName:
			cs = append(cs, newZKRecipes(addr))
		case oneShotName:
			cs = append(cs, newZKRecipesOneShot(addr))
		case curatorName:
			Say("starting the Curator peer")
			p, err := startCurator(ctx, cfg.Peer, addr, cfg.PeerHeapMB)
			if err != nil {
				return cs, err
			}
			cs = append(cs, p)
		case kazooName:
			Say("starting kazoo's peer")
			k, err := startKazoo(ctx, cfg.Kazoo, addr)
			if err != nil {
				return cs, err
			}
			cs = append(cs, k)
		default:
			return cs, fmt.Errorf("unknown contender %q (have %s)", name, strings.Join(append(AllContenders, oneShotName, kazooName), ", "))
		}
	}
	return cs, nil
}

// bench holds one run's contenders and what they measured.
type bench struct {
	tg         *target
	contenders []contender
	results    map[string]map[string][]measurement // scenario → contender → runs
	failures   []string
	trials     int
}

// warmUp runs the contenders in turn, untimed, for at least d: ZooKeeper's server
// keeps getting faster for tens of seconds after it starts (its JIT compiler shares
// two cores with everything else), and the first measured runs must find the server,
// the peer and our code as warm as the later ones.
func (b *bench) warmUp(ctx context.Context, d time.Duration) {
	Say("warming up for %v", d)
	work := []workload{
		{Kind: cycles, Cycles: 300},
		{Kind: contended, Sessions: 8, Duration: time.Second},
	}
	start := time.Now()
	for ctx.Err() == nil {
		for _, c := range b.contenders {
			for _, w := range work {
				b.trials++
				w.Path = path.Join(b.tg.root, "warmup", fmt.Sprintf("%s-%d", safe(c.Name()), b.trials))
				if _, err := measure(ctx, b.tg, c, w); err != nil && !errors.Is(err, errUnsupported) {
					Say("warm-up of %s failed: %v", c.Name(), err)
				}
			}
		}
		if time.Since(start) >= d {
			return
		}
	}
}

// scenario runs s: every applicable contender once, in order, runs times over.
func (b *bench) scenario(ctx context.Context, s scenario, runs int) {
	Say("%s: %s", s.id, s.title)
	b.results[s.id] = map[string][]measurement{}
	for r := 1; r <= runs; r++ {
		for _, c := range b.contenders {
			if !slices.Contains(s.who, c.Name()) || ctx.Err() != nil {
				continue
			}
			b.trials++
			w := s.work
			w.Path = path.Join(b.tg.root, s.id, fmt.Sprintf("%s-%d", safe(c.Name()), r))
			m, err := measure(ctx, b.tg, c, w)
			if err != nil {
				msg := fmt.Sprintf("%s, %s, run %d: %v", s.id, c.Name(), r, err)
				Say("FAILED %s", msg)
				b.failures = append(b.failures, msg)
				continue
			}
			b.results[s.id][c.Name()] = append(b.results[s.id][c.Name()], m)
			var figures []string
			for _, mt := range s.metrics {
				figures = append(figures, mt.label+" "+mt.format(mt.value(m)))
			}
			Say("  %-9s run %d: %s", c.Name(), r, strings.Join(figures, "; "))
		}
	}
}

// safe makes a contender's name a path segment.
func safe(name string) string { return strings.ReplaceAll(strings.ToLower(name), ".", "") }
