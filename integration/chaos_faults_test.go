package integration

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// chaosClient is one simulated process. Each of its connections goes through a proxy
// of its own, one per server, so that a fault can cut it off alone.
type chaosClient struct {
	name    string
	c       *framework.Client
	proxies []*zktest.Proxy
	timeout time.Duration // as the server granted it
	holding atomic.Bool   // a hold of this client's is under way

	mu      sync.Mutex
	session int64 // the session of the last Connected or Reconnected
	losts   []sessionLost
	states  []stateChange // every state it heard, for the report of a loss untold
}

// stateChange is a connection state the client's listener heard: when, and the
// session it was in.
type stateChange struct {
	at      time.Time
	state   framework.ConnectionState
	session int64
}

// sessionLost is the client going Lost: when, and which session it gave up.
type sessionLost struct {
	at      time.Time
	session int64
}

func newChaosClient(ctx context.Context, name string, e *zktest.Ensemble, policy framework.ErrorPolicy) (*chaosClient, error) {
	cc := &chaosClient{name: name}
	var addrs []string
	for _, a := range e.Addrs() {
		p, err := zktest.StartProxy(a)
		if err != nil {
			cc.close()
			return nil, err
		}
		cc.proxies = append(cc.proxies, p)
		addrs = append(addrs, p.Addr())
	}
	c, err := framework.New(addrs,
		framework.WithSessionTimeout(chaosSessionTimeout),
		framework.WithErrorPolicy(policy),
		framework.WithRetryPolicy(framework.BoundedExponentialBackoff(20*time.Millisecond, 500*time.Millisecond, 100)),
		framework.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		cc.close()
		return nil, err
	}
	cc.c = c
	c.Listen(func(s framework.ConnectionState) {
		cc.mu.Lock()
		defer cc.mu.Unlock()
		switch s {
		case framework.Connected, framework.Reconnected:
			cc.session = c.SessionID()
		case framework.Lost:
			cc.losts = append(cc.losts, sessionLost{time.Now(), cc.session})
		}
		cc.states = append(cc.states, stateChange{time.Now(), s, cc.session})
	})
	if err := c.WaitConnected(ctx); err != nil {
		cc.close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	cc.timeout = c.NegotiatedSessionTimeout()
	return cc, nil
}

func (cc *chaosClient) lostSessions() []sessionLost {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return append([]sessionLost(nil), cc.losts...)
}

func (cc *chaosClient) stateChanges() []stateChange {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return slices.Clone(cc.states)
}

// lostSince reports whether the client went Lost after t.
func (cc *chaosClient) lostSince(t time.Time) bool {
	for _, l := range cc.lostSessions() {
		if l.at.After(t) {
			return true
		}
	}
	return false
}

func (cc *chaosClient) close() {
	if cc.c != nil {
		_ = cc.c.Close()
	}
	for _, p := range cc.proxies {
		_ = p.Close()
	}
}

// blackhole is a fault that silenced one client for longer than its session timeout.
type blackhole struct {
	client *chaosClient
	from   time.Time
}

// caught reports whether h was already held when its client fell silent.
func (b blackhole) caught(h *hold) bool { return b.client == h.client && h.start.Before(b.from) }

// faults injects faults until ctx ends, and keeps the record. Client faults and server
// faults run side by side, each one at a time, so that a quorum always remains.
type faults struct {
	e       *zktest.Ensemble
	clients []*chaosClient

	mu         sync.Mutex
	counts     map[string]int
	blackholes []blackhole
	elections  []time.Duration // from killing the leader to the next one serving
	events     []faultEvent    // the fault log, for -chaos.keep
	err        error           // a server that would not start again
	// say prints at once what the report would otherwise say only at the end: a
	// server that would not start holds up everything after it.
	say func(format string, args ...any)
}

// startTries is how often a server that would not start is stopped and started
// again before the run gives up on it.
const startTries = 3

// start starts member i again, and if it will not serve, says why at once, stops it
// and tries again: the run is about the recipes, and a quorum left down by one
// failed start would hold up every check after the faults.
func (f *faults) start(i int) error {
	var err error
	for try := 1; try <= startTries; try++ {
		if err = f.e.Start(i); err == nil {
			return nil
		}
		first, _, _ := strings.Cut(err.Error(), "\n")
		f.note("server%d would not start (try %d of %d): %s", i+1, try, startTries, first)
		if f.say != nil {
			f.say("server%d would not start (try %d of %d): %v", i+1, try, startTries, err)
		}
		f.e.Stop(i)
	}
	return err
}

func (f *faults) count(kind string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts[kind]++
}

// run returns once ctx has ended and every fault is undone: all servers serve, and
// all proxies forward.
func (f *faults) run(ctx context.Context, seed uint64) {
	f.counts = map[string]int{}
	var wg sync.WaitGroup
	wg.Go(func() { f.clientFaults(ctx, rand.New(rand.NewPCG(seed, 1))) })
	wg.Go(func() { f.serverFaults(ctx, rand.New(rand.NewPCG(seed, 2))) })
	wg.Wait()
}

// clientFaults cuts one client's connections (it reconnects within its session
// timeout, to the same session), or black-holes them for longer than the session
// timeout, so that the servers expire its session while it hears nothing.
func (f *faults) clientFaults(ctx context.Context, rng *rand.Rand) {
	for pause(ctx, between(rng, 300*time.Millisecond, 1200*time.Millisecond)) {
		cc := f.victim(rng)
		if rng.Float64() < 0.6 {
			f.count("connection cut")
			f.note("connection cut: %s", cc.name)
			for _, p := range cc.proxies {
				p.Cut()
			}
			pause(ctx, between(rng, 100*time.Millisecond, 800*time.Millisecond))
		} else {
			f.count("black-holed past the session timeout")
			f.note("black-holed: %s", cc.name)
			f.mu.Lock()
			f.blackholes = append(f.blackholes, blackhole{cc, time.Now()})
			f.mu.Unlock()
			for _, p := range cc.proxies {
				p.Blackhole()
			}
			// Not cut short by ctx: the record says this client was silenced for
			// this long.
			time.Sleep(cc.timeout + 1500*time.Millisecond)
		}
		for _, p := range cc.proxies {
			p.Restore()
		}
		f.note("restored: %s", cc.name)
	}
}

// victim picks a client, one that holds something now half the time: a fault is
// most telling when it finds a holder.
func (f *faults) victim(rng *rand.Rand) *chaosClient {
	if rng.Float64() < 0.5 {
		var holders []*chaosClient
		for _, cc := range f.clients {
			if cc.holding.Load() {
				holders = append(holders, cc)
			}
		}
		if len(holders) > 0 {
			return holders[rng.IntN(len(holders))]
		}
	}
	return f.clients[rng.IntN(len(f.clients))]
}

// serverFaults kills a server, the leader half of the time, and starts it again; or
// makes an ensemble fault (a partition, a lost quorum).
func (f *faults) serverFaults(ctx context.Context, rng *rand.Rand) {
	for pause(ctx, between(rng, time.Second, 3*time.Second)) {
		if f.ensembleFault(ctx, rng) {
			if f.err != nil {
				return
			}
			continue
		}
		i := f.target(rng, "server stopped and started", "leader stopped and started")
		f.e.Stop(i)
		f.note("server%d killed", i+1)
		down := time.Now()
		if f.e.Leader() == -1 {
			f.awaitLeader(down)
		}
		pause(ctx, between(rng, 500*time.Millisecond, 2500*time.Millisecond))
		f.note("server%d starting", i+1)
		if err := f.start(i); err != nil {
			f.mu.Lock()
			f.err = fmt.Errorf("server %d would not start again: %w", i, err)
			f.mu.Unlock()
			return
		}
		f.note("server%d serving; leader: %s", i+1, f.leader())
	}
}

// target picks a server for a fault, the leader half of the time, and counts the
// fault as kind, or as leaderKind when it is the leader.
func (f *faults) target(rng *rand.Rand, kind, leaderKind string) int {
	i := rng.IntN(3)
	if rng.Float64() < 0.5 {
		if l := f.e.Leader(); l >= 0 {
			i, kind = l, leaderKind
		}
	}
	f.count(kind)
	f.note("%s: server%d", kind, i+1)
	return i
}

// leader names the member that leads now, for the fault log.
func (f *faults) leader() string {
	if l := f.e.Leader(); l >= 0 {
		return fmt.Sprintf("server%d", l+1)
	}
	return "none"
}

// awaitLeader records how long the ensemble went without a leader, since down.
func (f *faults) awaitLeader(down time.Time) {
	for time.Since(down) < wait {
		if l := f.e.Leader(); l >= 0 {
			f.mu.Lock()
			f.elections = append(f.elections, time.Since(down))
			f.mu.Unlock()
			f.note("server%d leads", l+1)
			return
		}
		time.Sleep(20 * time.Millisecond) // polling the servers' srvr
	}
}

// pause waits d, or until ctx ends; it reports whether ctx is still alive. The fault
// schedule's timing is the point here, not a way to wait for something.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// settleAfter polls look every so often, once the faults have stopped (at stopped),
// until it finds nothing wrong, for at most wait. It returns how long after stopped
// that was, or what look last found wrong.
func settleAfter(ctx context.Context, stopped time.Time, every time.Duration, look func() (wrong string)) (time.Duration, string) {
	deadline := time.Now().Add(wait)
	for {
		wrong := look()
		if wrong == "" {
			return time.Since(stopped), ""
		}
		if time.Now().After(deadline) || !pause(ctx, every) {
			return 0, wrong
		}
	}
}

// closeAll closes each of a workload's recipes, giving each its own 10 s: what one
// that cannot finish leaves behind, the run's check for leftover nodes reports.
func closeAll[T interface{ Close(context.Context) error }](ctx context.Context, recipes []T) {
	for _, r := range recipes {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_ = r.Close(cctx)
		cancel()
	}
}

func between(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	return lo + time.Duration(rng.Int64N(int64(hi-lo)))
}

// logModes tells say the servers' modes (srvr's) whenever they change, until ctx
// ends: what each server was doing while a phase after the faults overstayed.
func logModes(ctx context.Context, e *zktest.Ensemble, say func(modes string)) {
	last := ""
	for {
		var modes []string
		for i := range 3 {
			octx, cancel := context.WithTimeout(ctx, 2*time.Second)
			mode, err := e.Mode(octx, i)
			cancel()
			switch {
			case err != nil:
				mode = "unreachable"
			case mode == "":
				mode = "not serving"
			}
			modes = append(modes, fmt.Sprintf("server%d %s", i+1, mode))
		}
		if now := strings.Join(modes, ", "); now != last {
			say(now)
			last = now
		}
		if !pause(ctx, 2*time.Second) {
			return
		}
	}
}
