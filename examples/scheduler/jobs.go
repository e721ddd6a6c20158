package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zkrecipes/zkrecipes/recipes/partition"
)

const jobCount = 12

// board is what the demo knows of the jobs: who runs each now, and how often each
// was started, to check that no job runs twice at once and that jobs that stay put
// keep running.
type board struct {
	mu       sync.Mutex
	running  map[string]string // job -> replica
	starts   map[string]int
	overlaps int
	changed  chan struct{}
}

func (b *board) begin(who, job string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if other, ok := b.running[job]; ok {
		b.overlaps++
		say("!! %s starts %s while %s runs it", who, job, other)
	}
	b.running[job] = who
	b.starts[job]++
	b.signal()
}

func (b *board) end(who, job string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.running[job] == who {
		delete(b.running, job)
	}
	b.signal()
}

func (b *board) signal() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// await waits until every job runs once, on exactly the replicas named, each with
// ⌊12/n⌋ or ⌈12/n⌉ of them, and returns who runs what and how often each started.
func (b *board) await(ctx context.Context, replicas []string) (map[string]string, map[string]int, error) {
	for {
		b.mu.Lock()
		per := map[string]int{}
		for _, who := range b.running {
			per[who]++
		}
		ok := len(b.running) == jobCount && len(per) == len(replicas)
		for _, r := range replicas {
			n := per[r]
			ok = ok && (n == jobCount/len(replicas) || n == (jobCount+len(replicas)-1)/len(replicas))
		}
		running, starts, changed := maps.Clone(b.running), maps.Clone(b.starts), b.changed
		b.mu.Unlock()
		if ok {
			return running, starts, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, nil, fmt.Errorf("the jobs never settled on %v: %w", replicas, ctx.Err())
		}
	}
}

// startJobReplica starts a replica that runs its share of the jobs.
func startJobReplica(ctx context.Context, name, server, namespace string, jobs []string, b *board) (*replica, error) {
	r, err := connect(name, server, namespace)
	if err != nil {
		return nil, err
	}
	// A job runs until its ctx ends: it moves, or its lock may be lost.
	run := func(ctx context.Context, job partition.Item) error {
		b.begin(name, job.Name)
		defer b.end(name, job.Name)
		<-ctx.Done()
		return nil
	}
	r.jobs, err = partition.New(r.client, "/scheduler/jobs", run, partition.WithID(name), partition.Items(jobs...))
	if err == nil {
		err = r.jobs.Start(ctx)
	}
	if err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

// shareJobs has three replicas share twelve jobs, kills one (silenced until its
// session expires), and adds a fourth; it checks that no job ever ran twice at once,
// that the jobs of the living replicas never stopped, and that the dead replica's
// jobs had owners again within the session timeout and a second.
func shareJobs(ctx context.Context, server, namespace string) error {
	var jobs []string
	for i := 1; i <= jobCount; i++ {
		jobs = append(jobs, fmt.Sprintf("job-%02d", i))
	}
	say("three replicas share %d jobs through the partitioner (/scheduler/jobs)", jobCount)
	b := &board{running: map[string]string{}, starts: map[string]int{}, changed: make(chan struct{})}
	reps := map[string]*replica{}
	defer func() {
		for _, r := range reps {
			r.close()
		}
	}()
	for _, name := range []string{"replica-1", "replica-2", "replica-3"} {
		r, err := startJobReplica(ctx, name, server, namespace, jobs, b)
		if err != nil {
			return err
		}
		reps[name] = r
	}
	running, starts, err := b.await(ctx, []string{"replica-1", "replica-2", "replica-3"})
	if err != nil {
		return err
	}
	show(running)

	victim := "replica-2"
	say("killing %s: its network goes silent for good, and ZooKeeper expires its session", victim)
	bound := reps[victim].client.NegotiatedSessionTimeout() + time.Second
	killed := time.Now()
	reps[victim].proxy.Blackhole()
	after, afterStarts, err := b.await(ctx, []string{"replica-1", "replica-3"})
	if err != nil {
		return err
	}
	took := time.Since(killed)
	show(after)
	if err := kept(running, starts, after, afterStarts, victim); err != nil {
		return err
	}
	// The check allows a second past the bound for the demo's own pauses: its
	// replicas, server and checks share the machine's cores.
	allowed := bound + time.Second
	say("%s's jobs had new owners %v after it went silent (bound: its session timeout and a second, %v; checked against %v)",
		victim, took.Round(time.Millisecond), bound, allowed)
	if took > allowed {
		return fmt.Errorf("%s's jobs took %v to move, over the %v allowed", victim, took, allowed)
	}
	reps[victim].close()
	delete(reps, victim)

	say("replica-4 joins and takes its share")
	r, err := startJobReplica(ctx, "replica-4", server, namespace, jobs, b)
	if err != nil {
		return err
	}
	reps["replica-4"] = r
	final, finalStarts, err := b.await(ctx, []string{"replica-1", "replica-3", "replica-4"})
	if err != nil {
		return err
	}
	show(final)
	if err := kept(after, afterStarts, final, finalStarts, ""); err != nil {
		return err
	}
	if b.overlaps > 0 {
		return fmt.Errorf("a job ran twice at once (%d times)", b.overlaps)
	}
	return nil
}

// kept checks that every job that stayed with its replica from before to after ran
// on without being started again, and says how many moved.
func kept(before map[string]string, startsBefore map[string]int, after map[string]string, startsAfter map[string]int, gone string) error {
	moved := 0
	for job, who := range before {
		switch {
		case after[job] != who:
			moved++
		case startsAfter[job] != startsBefore[job]:
			return fmt.Errorf("%s stayed on %s but was stopped and started again", job, who)
		}
	}
	if gone != "" {
		say("%d jobs moved (%s's); the other jobs ran on without a pause", moved, gone)
	} else {
		say("%d jobs moved to the new replica; the other jobs ran on without a pause", moved)
	}
	return nil
}

func show(running map[string]string) {
	per := map[string][]string{}
	for job, who := range running {
		per[who] = append(per[who], job)
	}
	for _, who := range slices.Sorted(maps.Keys(per)) {
		slices.Sort(per[who])
		say("  %s runs %s", who, strings.Join(per[who], " "))
	}
}
