package driver

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// The three Go contenders (the raw operations, go-zookeeper's zk.Lock and zkrecipes)
// run every workload with the same code, below; each only says how to make a
// session and a participant.

// locker is one participant of a lock or semaphore.
type locker interface {
	Acquire(ctx context.Context) error
	Release(ctx context.Context) error
}

// candidate is one participant of a leader election.
type candidate interface {
	// Close leaves the election.
	Close(ctx context.Context) error
}

// goSession is one ZooKeeper session of a Go contender. A method returns
// errUnsupported for what the contender does not have.
type goSession interface {
	Mutex(path string) (locker, error)
	ReadLock(path string) (locker, error)
	WriteLock(path string) (locker, error)
	Semaphore(path string, leases int) (locker, error)
	// Latch joins the election at path; onLeader is called when it leads.
	Latch(ctx context.Context, path string, onLeader func()) (candidate, error)
	Close()
}

// goContender is a contender that runs in this process.
type goContender struct {
	name  string
	kinds []kind
	dial  func(ctx context.Context, addr string) (goSession, error)
	addr  string
}

func (g *goContender) Name() string       { return g.name }
func (g *goContender) InProcess() bool    { return true }
func (g *goContender) CPU() time.Duration { return selfCPU() }
func (g *goContender) Close() error       { return nil }

func (g *goContender) supports(k kind) bool {
	for _, s := range g.kinds {
		if s == k {
			return true
		}
	}
	return false
}

// goTrial is one prepared run of a Go contender.
type goTrial struct {
	w        workload
	sessions []goSession
	lockers  []locker
	writer   []bool
	holder   locker
	// A handover's candidates still in the election (nil once closed), closed
	// before the sessions.
	candidates []candidate
}

func (g *goContender) Prepare(ctx context.Context, w workload) (trial, error) {
	if t, ok, err := g.prepareRecipe(ctx, w); ok {
		return t, err
	}
	if t, ok, err := g.prepareDiscovery(ctx, w); ok {
		return t, err
	}
	switch w.Kind {
	case counterAdds:
		return g.prepareCounter(ctx, w)
	case partitionJoin, partitionLeave, partitionLoss:
		return g.preparePartition(ctx, w)
	}
	if !g.supports(w.Kind) {
		return nil, errUnsupported
	}
	ss, err := g.dialAll(ctx, w.sessions())
	if err != nil {
		return nil, err
	}
	t := &goTrial{w: w, sessions: ss}
	if err := t.participants(ctx); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// dialAll connects n sessions at once.
func (g *goContender) dialAll(ctx context.Context, n int) ([]goSession, error) {
	ss := make([]goSession, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range ss {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ss[i], errs[i] = g.dial(ctx, g.addr)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, s := range ss {
			if s != nil {
				s.Close()
			}
		}
		return nil, fmt.Errorf("%s: connecting: %w", g.name, err)
	}
	return ss, nil
}

// participants makes the workload's participants, one per session (the queue's
// waiters are spread over its sessions), and runs the warm-up.
func (t *goTrial) participants(ctx context.Context) error {
	w, ss := t.w, t.sessions
	add := func(l locker, err error, writer bool) error {
		if err != nil {
			return err
		}
		t.lockers = append(t.lockers, l)
		t.writer = append(t.writer, writer)
		return nil
	}
	switch w.Kind {
	case cycles:
		l, err := ss[0].Mutex(w.Path)
		if err := add(l, err, false); err != nil {
			return err
		}
		for range w.Warmup {
			if err := cycle(ctx, l); err != nil {
				return err
			}
		}
	case contended:
		for _, s := range ss {
			l, err := s.Mutex(w.Path)
			if err := add(l, err, false); err != nil {
				return err
			}
		}
	case rw:
		for i, s := range ss {
			var l locker
			var err error
			if i < w.Readers {
				l, err = s.ReadLock(w.Path)
			} else {
				l, err = s.WriteLock(w.Path)
			}
			if err := add(l, err, i >= w.Readers); err != nil {
				return err
			}
		}
	case counting:
		for _, s := range ss {
			l, err := s.Semaphore(w.Path, w.Leases)
			if err := add(l, err, false); err != nil {
				return err
			}
		}
	case queue:
		var err error
		if t.holder, err = ss[0].Mutex(w.Path); err != nil {
			return err
		}
		for i := range w.Waiters {
			l, err := ss[1+i%w.Sessions].Mutex(w.Path)
			if err := add(l, err, false); err != nil {
				return err
			}
		}
	}
	return nil
}

func (t *goTrial) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for _, c := range t.candidates {
		if c != nil {
			wg.Go(func() { _ = c.Close(ctx) })
		}
	}
	wg.Wait()
	closeAll(t.sessions)
}

// closeAll closes the sessions at once.
func closeAll(ss []goSession) {
	var wg sync.WaitGroup
	for _, s := range ss {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.Close()
		}()
	}
	wg.Wait()
}

func (t *goTrial) Run(ctx context.Context, queued func(context.Context) error) (result, error) {
	switch t.w.Kind {
	case cycles:
		return runCycles(ctx, t.lockers[0], t.w.Cycles)
	case contended, rw, counting:
		return runTimed(ctx, t.lockers, t.writer, t.w.Duration)
	case handover:
		return t.handover(ctx, queued)
	case queue:
		return runQueue(ctx, t.holder, t.lockers, queued)
	}
	return result{}, errUnsupported
}

func cycle(ctx context.Context, l locker) error {
	if err := l.Acquire(ctx); err != nil {
		return err
	}
	return l.Release(ctx)
}

func runCycles(ctx context.Context, l locker, n int) (result, error) {
	lat := make([]time.Duration, n)
	start := time.Now()
	for i := range lat {
		t := time.Now()
		if err := cycle(ctx, l); err != nil {
			return result{}, err
		}
		lat[i] = time.Since(t)
	}
	return result{Ops: n, Total: n, Elapsed: time.Since(start), Latencies: lat}, nil
}

// runTimed runs each locker on a goroutine of its own, acquiring and releasing in a
// loop, for d; then every goroutine finishes the cycle it is in.
func runTimed(ctx context.Context, lockers []locker, writer []bool, d time.Duration) (result, error) {
	var stop atomic.Bool
	var ops, total, reads, writes atomic.Int64
	errs := make(chan error, len(lockers))
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for i, l := range lockers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if err := l.Acquire(ctx); err != nil {
					errs <- err
					stop.Store(true)
					return
				}
				now := time.Now()
				if err := l.Release(ctx); err != nil {
					errs <- err
					stop.Store(true)
					return
				}
				total.Add(1)
				if now.Before(deadline) {
					ops.Add(1)
					if writer[i] {
						writes.Add(1)
					} else {
						reads.Add(1)
					}
				}
			}
		}()
	}
	if err := runFor(ctx, d, &stop, &wg, errs); err != nil {
		return result{}, err
	}
	return result{Ops: int(ops.Load()), Total: int(total.Load()), Reads: int(reads.Load()),
		Writes: int(writes.Load()), Elapsed: d}, nil
}

// waitGroup waits for wg, or for ctx to end: a go-zookeeper lock cannot be cancelled,
// so its goroutines end only when the trial closes its sessions.
// runFor lets the workers run for d (or until ctx ends), tells them to stop, waits
// for them, and returns the first error one of them sent.
func runFor(ctx context.Context, d time.Duration, stop *atomic.Bool, wg *sync.WaitGroup, errs chan error) error {
	timer := time.NewTimer(d)
	select {
	case <-timer.C:
	case <-ctx.Done():
		timer.Stop()
	}
	stop.Store(true)
	if err := waitGroup(ctx, wg); err != nil {
		return err
	}
	close(errs)
	return <-errs
}

func waitGroup(ctx context.Context, wg *sync.WaitGroup) error {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("workers did not finish: %w", ctx.Err())
	}
}

// handover: the first candidate joins and leads, then the others join, spread over
// the sessions, and have w.Settle to queue up; queued looks at them. Each round the
// leader leaves the election; the latency is from the call to leave until the next
// candidate's listener hears it leads; the old leader's session then joins again at
// the back, with w.Settle to queue up. The candidates left are closed with the trial.
func (t *goTrial) handover(ctx context.Context, queued func(context.Context) error) (result, error) {
	w, ss := t.w, t.sessions
	type lead struct {
		i  int // the candidate's index in t.candidates
		at time.Time
	}
	leads := make(chan lead, w.participants()+w.Rounds) // each candidate leads once at most
	var session []goSession                             // each candidate's
	join := func(s goSession) error {
		i := len(t.candidates)
		c, err := s.Latch(ctx, w.Path, func() {
			select {
			case leads <- lead{i, time.Now()}:
			default: // a second lead (after a lost session) is not a hand-over of ours
			}
		})
		if err != nil {
			return err
		}
		t.candidates, session = append(t.candidates, c), append(session, s)
		return nil
	}
	await := func() (lead, error) {
		select {
		case l := <-leads:
			return l, nil
		case <-ctx.Done():
			return lead{}, fmt.Errorf("waiting for a leader: %w", ctx.Err())
		}
	}
	if err := join(ss[0]); err != nil {
		return result{}, err
	}
	leader, err := await()
	if err != nil {
		return result{}, err
	}
	for i := 1; i < w.participants(); i++ {
		if err := join(ss[i%len(ss)]); err != nil {
			return result{}, err
		}
	}
	time.Sleep(w.Settle)
	if err := queued(ctx); err != nil {
		return result{}, err
	}
	lat := make([]time.Duration, w.Rounds)
	start := time.Now()
	for r := range lat {
		t0 := time.Now()
		old := t.candidates[leader.i]
		t.candidates[leader.i] = nil
		if err := old.Close(ctx); err != nil {
			return result{}, err
		}
		next, err := await()
		if err != nil {
			return result{}, err
		}
		lat[r] = next.at.Sub(t0)
		if err := join(session[leader.i]); err != nil {
			return result{}, err
		}
		leader = next
		time.Sleep(w.Settle)
	}
	return result{Ops: w.Rounds, Total: w.Rounds, Elapsed: time.Since(start), Latencies: lat}, nil
}

// runQueue: the holder acquires, the waiters queue behind it, queued looks at the
// queue, then the holder releases and each waiter acquires once and releases.
func runQueue(ctx context.Context, holder locker, waiters []locker, queued func(context.Context) error) (result, error) {
	if err := holder.Acquire(ctx); err != nil {
		return result{}, err
	}
	errs := make(chan error, len(waiters))
	var wg sync.WaitGroup
	for _, l := range waiters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := cycle(ctx, l); err != nil {
				errs <- err
			}
		}()
	}
	qerr := queued(ctx)
	start := time.Now()
	if err := holder.Release(ctx); err != nil {
		return result{}, err
	}
	if err := waitGroup(ctx, &wg); err != nil {
		return result{}, err
	}
	elapsed := time.Since(start)
	close(errs)
	if err := errors.Join(qerr, <-errs); err != nil {
		return result{}, err
	}
	n := len(waiters) + 1
	return result{Ops: n, Total: n, Elapsed: elapsed}, nil
}
