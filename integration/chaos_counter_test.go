package integration

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/zkrecipes/zkrecipes/recipes/counter"
)

// counterWorkload adds to one counter from several clients under the faults, half of
// them promoted to a lock, and records every call: its times, what it asked and what
// it was told. The history must be linearizable for a 64-bit counter.
type counterWorkload struct {
	path     string
	clients  []*chaosClient
	counters []*counter.Counter
	began    time.Time

	mu       sync.Mutex
	history  []porcupine.Operation
	outcomes map[string]int
	checked  porcupine.CheckResult
	took     time.Duration
}

func newCounterWorkload(clients []*chaosClient) (*counterWorkload, error) {
	w := &counterWorkload{path: "/chaos/counter", clients: clients, began: time.Now(), outcomes: map[string]int{}}
	for i, cc := range clients {
		var opts []counter.Option
		if i%2 == 1 {
			opts = append(opts, counter.PromotedToLock("/chaos/counter-lock"))
		}
		n, err := counter.New(cc.c, w.path, opts...)
		if err != nil {
			return nil, err
		}
		w.counters = append(w.counters, n)
	}
	return w, nil
}

// The history's operations: an add, a compare-and-set, a read.
type (
	addInput struct{ delta int64 }
	casInput struct{ expect, v int64 }
	getInput struct{}
	// addOutput is an add's Result; unknown marks an add that may or may not have
	// applied, which the history holds open to the end.
	addOutput struct {
		pre, post int64
		failed    bool // nothing written, by the package's word
		unknown   bool
	}
	casOutput struct{ swapped, failed, unknown bool }
)

// counterModel is the specification the history is checked against. A call that
// failed had no effect; one whose outcome is unknown has the effect it asked for at
// some point after its call, or none (it is placed after every other call, which
// its open end allows).
var counterModel = porcupine.Model{
	Init: func() any { return int64(0) },
	Step: func(state, input, output any) (bool, any) {
		v := state.(int64)
		switch in := input.(type) {
		case addInput:
			out := output.(addOutput)
			switch {
			case out.failed:
				return true, v
			case out.unknown:
				return true, v + in.delta
			}
			return out.pre == v && out.post == v+in.delta, v + in.delta
		case casInput:
			out := output.(casOutput)
			switch {
			case out.failed:
				return true, v
			case out.unknown, out.swapped == (v == in.expect):
				if v == in.expect {
					return true, in.v
				}
				return true, v
			}
			return false, v
		case getInput:
			return output.(int64) == v, v
		}
		return false, v
	},
	DescribeOperation: func(input, output any) string { return fmt.Sprintf("%+v -> %+v", input, output) },
}

// work runs client i's calls until ctx ends: mostly adds, some compare-and-sets from
// the last value it saw, some reads.
func (w *counterWorkload) work(ctx context.Context, i int, rng *rand.Rand) {
	cc, n := w.clients[i], w.counters[i]
	var last int64     // the last value this client saw
	var prevCall int64 // when its previous call began
	session := cc.c.SessionID()
	for ctx.Err() == nil {
		octx, cancel := context.WithTimeout(ctx, 10*time.Second)
		call := w.now()
		// A read sees at least what its own session has seen; a new session may
		// reach a server that has seen less, so its reads are placed anywhere before
		// their return.
		readFrom := prevCall
		if now := cc.c.SessionID(); now != session || cc.lostSince(w.began.Add(time.Duration(prevCall))) {
			readFrom, session = 0, now
		}
		prevCall = call
		var op porcupine.Operation
		switch p := rng.Float64(); {
		case p < 0.75:
			delta := 1 + rng.Int64N(1000)
			r, err := n.Add(octx, delta)
			out := addOutput{pre: r.Pre, post: r.Post}
			out.failed, out.unknown = w.classify("add", err)
			op = porcupine.Operation{ClientId: i, Input: addInput{delta}, Call: call, Output: out}
			if err == nil {
				last = r.Post
			}
		case p < 0.9:
			in := casInput{expect: last, v: last + 1 + rng.Int64N(1000)}
			swapped, err := n.CompareAndSet(octx, in.expect, in.v)
			out := casOutput{swapped: swapped}
			kind := "compare-and-set"
			if err == nil {
				kind += map[bool]string{true: " swapped", false: " refused"}[swapped]
			}
			out.failed, out.unknown = w.classify(kind, err)
			op = porcupine.Operation{ClientId: i, Input: in, Call: call, Output: out}
			switch {
			case err == nil && swapped:
				last = in.v
			case err == nil: // decided on a read
				op.Call = readFrom
			}
		default:
			v, err := n.Get(octx)
			if _, unknown := w.classify("get", err); err != nil || unknown {
				cancel()
				continue // a failed read tells nothing
			}
			last = v
			op = porcupine.Operation{ClientId: i, Input: getInput{}, Call: readFrom, Output: v}
		}
		cancel()
		op.Return = w.now()
		if unknownOutcome(op.Output) {
			op.Return = math.MaxInt64
		}
		w.mu.Lock()
		w.history = append(w.history, op)
		w.mu.Unlock()
		pause(ctx, between(rng, 0, 10*time.Millisecond))
	}
}

func (w *counterWorkload) now() int64 { return int64(time.Since(w.began)) }

func unknownOutcome(out any) bool {
	switch o := out.(type) {
	case addOutput:
		return o.unknown
	case casOutput:
		return o.unknown
	}
	return false
}

// classify counts an outcome and says whether the call wrote nothing or may have.
func (w *counterWorkload) classify(kind string, err error) (failed, unknown bool) {
	var what string
	switch {
	case err == nil:
		what = "ok"
	case errors.Is(err, counter.ErrUnknownOutcome):
		what, unknown = "outcome unknown", true
	case errors.Is(err, counter.ErrGaveUp):
		what, failed = "gave up", true
	case errors.Is(err, context.DeadlineExceeded):
		what, failed = "timed out (10 s)", true
	default:
		what, failed = "failed", true
	}
	w.mu.Lock()
	w.outcomes[kind+" "+what]++
	w.mu.Unlock()
	return failed, unknown
}

// finish reads the final value with an add of 0, a conditional write and so a
// linearizable read, after every other call but the open ones; checks the history;
// and deletes the counter, which the run must not leave behind.
func (w *counterWorkload) finish(ctx context.Context) error {
	octx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	call := w.now()
	r, err := w.counters[0].Add(octx, 0)
	if err != nil {
		return fmt.Errorf("counter: the final read: %w", err)
	}
	w.history = append(w.history, porcupine.Operation{ClientId: len(w.clients), Input: addInput{0}, Call: call,
		Output: addOutput{pre: r.Pre, post: r.Post}, Return: w.now()})
	began := time.Now()
	w.checked = porcupine.CheckOperationsTimeout(counterModel, w.history, 5*time.Minute)
	w.took = time.Since(began)
	return w.clients[0].c.Delete(octx, w.path, -1)
}

// problems are the violations: a history that is not linearizable, or that the
// checker could not decide.
func (w *counterWorkload) problems() []string {
	switch w.checked {
	case porcupine.Ok:
		return nil
	case porcupine.Illegal:
		return []string{fmt.Sprintf("counter: the history of %d calls is not linearizable", len(w.history))}
	}
	return []string{fmt.Sprintf("counter: the checker could not decide on %d calls within its time limit", len(w.history))}
}

func (w *counterWorkload) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	verdict := map[porcupine.CheckResult]string{porcupine.Ok: "linearizable", porcupine.Illegal: "NOT linearizable", porcupine.Unknown: "undecided"}[w.checked]
	return fmt.Sprintf("counter: %d calls by %d clients (%s); history %s (porcupine, %v)",
		len(w.history), len(w.clients), sortedCounts(w.outcomes), verdict, w.took.Round(time.Millisecond))
}
