package driver

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// kind is the shape of a workload; every contender that supports a kind runs the
// same workload, so that their figures compare.
type kind string

const (
	// cycles: one session acquires and releases one mutex, Warmup times untimed, then
	// Cycles times, timing each cycle.
	cycles kind = "cycles"
	// contended: Sessions sessions, one participant each, loop acquire+release on one
	// mutex for Duration.
	contended kind = "mutex"
	// rw: Readers sessions loop on the read side of one read/write lock and Writers
	// sessions on its write side, for Duration.
	rw kind = "rwlock"
	// counting: Sessions sessions loop on one lease of a semaphore of Leases leases,
	// for Duration.
	counting kind = "semaphore"
	// handover: participants() candidates of one leader latch, spread over
	// sessions() sessions (two and two unless Members and Sessions say), hand the
	// leadership on Rounds times: the leader leaves, the next one leads, and the old
	// leader's session joins again at the back and has Settle to queue up.
	handover kind = "handover"
	// queue: a holder holds a mutex while Waiters participants, spread over Sessions
	// sessions, queue behind it; then the holder releases and each waiter acquires
	// once and releases.
	queue kind = "queue"
)

// workload is one run of a scenario, for one contender, on its own path.
type workload struct {
	Kind     kind
	Path     string
	Warmup   int
	Cycles   int
	Sessions int
	Readers  int
	Writers  int
	Leases   int
	Duration time.Duration
	Rounds   int
	Settle   time.Duration
	Waiters  int
	Nodes    int   // cached nodes written to (cache-storm)
	Items    int   // items shared (partition)
	Members  int   // members sharing them between changes (partition); members of the group (group-join); candidates (handover)
	Fanout   []int // the tree cache-load makes, three levels; default treeFanout
}

// fanout is the tree a cache-load makes.
func (w workload) fanout() []int {
	if len(w.Fanout) > 0 {
		return w.Fanout
	}
	return treeFanout
}

// sessions is how many ZooKeeper sessions the workload uses.
func (w workload) sessions() int {
	switch w.Kind {
	case cycles:
		return 1
	case rw:
		return w.Readers + w.Writers
	case handover:
		if w.Sessions > 0 {
			return w.Sessions
		}
		return 2
	case queue:
		return w.Sessions + 1
	}
	return w.Sessions
}

// participants is how many candidates a handover workload keeps in the election.
func (w workload) participants() int {
	return max(w.Members, 2)
}

// result is what a trial measured. Counts of timed workloads cover only the
// acquisitions made before the deadline, except Total, which counts every acquisition
// made between the server counters' readings, to divide requests by.
type result struct {
	Ops       int             // acquisitions (or hand-overs) measured
	Total     int             // every acquisition of the run, drain included
	Reads     int             // read-side acquisitions (rwlock)
	Writes    int             // write-side acquisitions (rwlock)
	Elapsed   time.Duration   // the timed window, or the drain of a queue
	Latencies []time.Duration // per cycle, or per hand-over
	Heap      float64         // bytes of heap per cached node (cache-load) or member or instance known, 0 when unknown
	Failed    int             // adds that gave up (counter)
	// A partition's measured changes, summed over them: items whose owner changed,
	// the fewest that had to, items that paused and yet stayed with their owner, the
	// item-time no live member ran, and the requests the servers received.
	Moved         int
	Fewest        int
	PausedUnmoved int
	WorkLost      time.Duration
	Requests      int64
	// Changer is the session that made the changes others follow (a group's joiner,
	// a discovery's registrar), so that its own requests can be told from theirs.
	Changer int64
}

// contender is one way of doing the work: the raw operations, go-zookeeper's lock,
// zkrecipes or Apache Curator.
type contender interface {
	Name() string
	// InProcess reports whether the contender runs in this process, so that its
	// goroutines and heap can be counted.
	InProcess() bool
	// CPU is the CPU time the contender's process has used so far.
	CPU() time.Duration
	// Prepare connects the workload's sessions and does what must precede the
	// measurement (a warm-up); it returns once the trial is ready to run.
	Prepare(ctx context.Context, w workload) (trial, error)
	Close() error
}

// trial is one prepared run.
type trial interface {
	// Run does the measured work. A queue workload calls queued once every waiter is
	// on its way, and releases the holder only when queued returns.
	Run(ctx context.Context, queued func(context.Context) error) (result, error)
	// Close ends the trial's sessions.
	Close()
}

var errUnsupported = errors.New("workload not supported by this contender")

// command is the workload as the Curator peer reads it (see CuratorPeer.Bench).
func (w workload) command() (string, error) {
	ms := w.Duration.Milliseconds()
	switch w.Kind {
	case cycles:
		return fmt.Sprintf("cycles %s %d %d", w.Path, w.Warmup, w.Cycles), nil
	case contended:
		return fmt.Sprintf("mutex %s %d %d", w.Path, w.Sessions, ms), nil
	case rw:
		return fmt.Sprintf("rwlock %s %d %d %d", w.Path, w.Readers, w.Writers, ms), nil
	case counting:
		return fmt.Sprintf("semaphore %s %d %d %d", w.Path, w.Sessions, w.Leases, ms), nil
	case handover:
		return fmt.Sprintf("handover %s %d %d %d %d", w.Path, w.Rounds, w.Settle.Milliseconds(), w.participants(), w.sessions()), nil
	case queue:
		return fmt.Sprintf("queue %s %d %d", w.Path, w.Waiters, w.Sessions), nil
	case counterAdds:
		return fmt.Sprintf("counter %s %d %d", w.Path, w.Sessions, ms), nil
	}
	return recipeCommand(w)
}
