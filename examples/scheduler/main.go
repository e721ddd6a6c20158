// Command scheduler is zkrecipes' demo, run by `make demo`: three replicas of a
// scheduler elect one poller, the poller's session is expired and another replica
// takes over; then the replicas share twelve jobs through the partitioner, one is
// killed and its jobs move while the others' keep running, and a new one takes its
// share; then five workers add to a shared counter under a lock. It checks what it
// shows, and exits non-zero if an invariant broke.
//
// Without configuration it starts a throwaway ZooKeeper; with ZK_SERVERS set
// (host:port,host:port) it uses that ensemble, under a fresh namespace.
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/election"
	"github.com/zkrecipes/zkrecipes/recipes/mutex"
	"github.com/zkrecipes/zkrecipes/recipes/partition"
	"github.com/zkrecipes/zkrecipes/zktest"
)

const (
	replicas       = 3
	workers        = 5
	increments     = 20
	pollEvery      = 300 * time.Millisecond
	sessionTimeout = 2 * time.Second
)

var start = time.Now()

func say(format string, args ...any) {
	fmt.Printf("[%5.1fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
}

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "demo failed:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	fmt.Println("zkrecipes demo: one scheduler poller among three replicas, then jobs shared among them, then a counter under a lock")
	servers, namespace, stop, err := zookeeper(ctx)
	if err != nil {
		return err
	}
	defer stop()

	// Each replica reaches ZooKeeper through a fault proxy, so that the demo can
	// silence one replica's network until the server expires its session.
	p := &pollers{}
	var reps []*replica
	for i := 1; i <= replicas; i++ {
		r, err := startReplica(ctx, fmt.Sprint("replica-", i), servers[0], namespace, p)
		if err != nil {
			return err
		}
		defer r.close() // a second close does nothing
		reps = append(reps, r)
	}

	first, err := p.waitForPolls(ctx, "", 3)
	if err != nil {
		return err
	}
	leader := reps[indexOf(reps, first)]
	granted := leader.client.NegotiatedSessionTimeout()
	say("expiring %s's session: its network goes silent until ZooKeeper gives up on it (%v)", first, granted)
	if err := leader.proxy.ExpireSession(ctx, granted); err != nil {
		return err
	}
	second, err := p.waitForPolls(ctx, first, 3)
	if err != nil {
		return err
	}
	say("%s took over from %s; stopping the replicas", second, first)
	for _, r := range reps { // the poller last, so that nobody takes over from it
		if r.name != second {
			r.close()
		}
	}
	reps[indexOf(reps, second)].close()
	if p.overlaps.Load() > 0 {
		return fmt.Errorf("two replicas polled at once (%d times)", p.overlaps.Load())
	}

	if err := shareJobs(ctx, servers[0], namespace); err != nil {
		return err
	}

	count, err := countUnderLock(ctx, servers, namespace)
	if err != nil {
		return err
	}
	if count != workers*increments {
		return fmt.Errorf("the counter is %d, not %d: the lock let two writers in", count, workers*increments)
	}
	fmt.Printf("OK: one poller at a time; leadership moved from %s to %s after its session expired; "+
		"every job ran on one replica at a time and moved only when it had to; the count is exact (%d).\n",
		first, second, count)
	return nil
}

// zookeeper returns the servers to use: ZK_SERVERS, or a throwaway local server.
func zookeeper(ctx context.Context) (servers []string, namespace string, stop func(), err error) {
	namespace = "zkrecipes-demo-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if env := os.Getenv("ZK_SERVERS"); env != "" {
		servers = strings.Split(env, ",")
		say("ZooKeeper: %s (from ZK_SERVERS), under /%s", env, namespace)
		return servers, namespace, func() {}, nil
	}
	srv, err := zktest.StartServer(ctx)
	if err != nil {
		return nil, "", nil, err
	}
	say("ZooKeeper: a throwaway server at %s (set ZK_SERVERS to use your own)", srv.Addr())
	return []string{srv.Addr()}, namespace, func() { _ = srv.Close() }, nil
}

// pollers is what the demo knows of the replicas' polling, to check it.
type pollers struct {
	mu       sync.Mutex
	polling  string         // who polls now
	polls    map[string]int // polls per replica
	changed  chan struct{}
	overlaps atomic.Int32
}

func (p *pollers) begin(who string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.polling != "" {
		p.overlaps.Add(1)
		say("!! %s starts polling while %s polls", who, p.polling)
	}
	p.polling = who
}

func (p *pollers) end(who string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.polling == who {
		p.polling = ""
	}
}

func (p *pollers) poll(who string) {
	p.mu.Lock()
	if p.polls == nil {
		p.polls = map[string]int{}
	}
	p.polls[who]++
	n := p.polls[who]
	if p.changed != nil {
		close(p.changed)
	}
	p.changed = make(chan struct{})
	p.mu.Unlock()
	say("%s polls the scheduler (#%d)", who, n)
}

// waitForPolls waits until a replica other than not has polled n times, and names it.
func (p *pollers) waitForPolls(ctx context.Context, not string, n int) (string, error) {
	for {
		p.mu.Lock()
		for who, count := range p.polls {
			if who != not && count >= n {
				p.mu.Unlock()
				return who, nil
			}
		}
		if p.changed == nil {
			p.changed = make(chan struct{})
		}
		changed := p.changed
		p.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return "", fmt.Errorf("no replica polled: %w", ctx.Err())
		}
	}
}

// replica is one replica's session, through a fault proxy that can silence it, and
// what it runs: the poller's election, or its share of the jobs.
type replica struct {
	name      string
	proxy     *zktest.Proxy
	client    *framework.Client
	selector  *election.Selector
	jobs      *partition.Partitioner
	closeOnce sync.Once
}

// connect gives a replica its own session, through a proxy of its own.
func connect(name, server, namespace string) (*replica, error) {
	proxy, err := zktest.StartProxy(server)
	if err != nil {
		return nil, err
	}
	client, err := framework.New([]string{proxy.Addr()},
		framework.WithSessionTimeout(sessionTimeout), framework.WithNamespace(namespace))
	if err != nil {
		proxy.Close()
		return nil, err
	}
	return &replica{name: name, proxy: proxy, client: client}, nil
}

func startReplica(ctx context.Context, name, server, namespace string, p *pollers) (*replica, error) {
	r, err := connect(name, server, namespace)
	if err != nil {
		return nil, err
	}
	// The poller: runs only while this replica leads, and stops as soon as its
	// leadership may be lost (the Selector cancels ctx on Suspended).
	lead := func(ctx context.Context, term election.Term) error {
		say("%s leads (fencing token %d): it starts polling", name, term.FencingToken)
		p.begin(name)
		defer p.end(name)
		tick := time.NewTicker(pollEvery)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				p.poll(name)
			case <-ctx.Done():
				say("%s stops polling (%v)", name, context.Cause(ctx))
				return nil
			}
		}
	}
	r.selector, err = election.NewSelector(r.client, "/scheduler/poller", lead, election.WithID(name), election.AutoRequeue())
	if err == nil {
		err = r.selector.Start(ctx)
	}
	if err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

// close stops what the replica runs and ends its session; a second close does
// nothing. A silenced replica gives up after two seconds.
func (r *replica) close() {
	r.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if r.selector != nil {
			_ = r.selector.Close(ctx)
		}
		if r.jobs != nil {
			_ = r.jobs.Close(ctx)
		}
		_ = r.client.Close()
		_ = r.proxy.Close()
	})
}

func indexOf(reps []*replica, name string) int {
	for i, r := range reps {
		if r.name == name {
			return i
		}
	}
	return -1
}

// countUnderLock has five workers, each with its own session, add to a counter
// node with a read-modify-write that only mutual exclusion keeps exact.
func countUnderLock(ctx context.Context, servers []string, namespace string) (int, error) {
	say("%d workers each add 1 to /counter %d times, under the lock /locks/counter", workers, increments)
	setup, err := framework.New(servers, framework.WithNamespace(namespace))
	if err != nil {
		return 0, err
	}
	defer setup.Close()
	if _, err := setup.Create(ctx, "/counter", []byte("0")); err != nil {
		return 0, err
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for i := 1; i <= workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- work(ctx, servers, namespace, fmt.Sprint("worker-", i))
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return 0, err
		}
	}
	data, _, err := setup.Get(ctx, "/counter")
	if err != nil {
		return 0, err
	}
	count, err := strconv.Atoi(string(data))
	say("counter = %d (expected %d)", count, workers*increments)
	return count, err
}

func work(ctx context.Context, servers []string, namespace, name string) error {
	client, err := framework.New(servers, framework.WithNamespace(namespace))
	if err != nil {
		return err
	}
	defer client.Close()
	lock, err := mutex.New(client, "/locks/counter", mutex.WithID(name))
	if err != nil {
		return err
	}
	for range increments {
		// Do holds the lock while the function runs, ends its ctx if the lock may be
		// lost, and releases it after, even on a panic.
		err := lock.Do(ctx, func(ctx context.Context) error {
			data, stat, err := client.Get(ctx, "/counter")
			if err != nil {
				return err
			}
			n, _ := strconv.Atoi(string(data))
			_, err = client.Set(ctx, "/counter", []byte(strconv.Itoa(n+1)), stat.Version)
			return err
		})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}
