package integration

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/counter"
)

// counterWorkload adds to counters from several clients under the faults, half of
// them promoted to a lock, and records every call: its times, what it asked and what
// it was told. The history must be linearizable for a 64-bit counter.
//
// The clients move to a new counter every counterEpoch, and each counter's history
// is checked on its own: linearizability is a property of each object, and a
// history's check grows far faster than its length once unknown outcomes hold calls
// open to its end (one counter over a 10-minute soak took the checker past 23 GiB).
// A counter no client can call any more is checked and deleted during the run
// (retire), so that a soak's histories and nodes do not grow with its length.
type counterWorkload struct {
	clients []*chaosClient
	opts    [][]counter.Option // client i's
	began   time.Time

	mu        sync.Mutex
	histories map[int][]counterCall // by epoch: one counter's calls, until checked
	inFlight  map[int]int           // by epoch: calls begun and not yet recorded
	calls     int
	counters  int      // counters checked
	undeleted []string // counters checked and not yet deleted
	outcomes  map[string]int
	checked   porcupine.CheckResult
	illegal   []span // the counters whose histories are not linearizable
	undecided int    // the counters whose histories the checker could not decide on
	took      time.Duration
	// strictOnly are the counters whose histories are linearizable only because a
	// read is placed after the last write its session had acknowledged (readBound),
	// not after the client's previous call as the run placed it before.
	strictOnly []string
	// dir is where a failing history and its visualization are written (the keep
	// directory, or a temporary one made at the first); records names the files.
	dir     string
	records map[string][]string // by counter node
}

const counterEpoch = 20 * time.Second

func newCounterWorkload(clients []*chaosClient) (*counterWorkload, error) {
	w := &counterWorkload{clients: clients, began: time.Now(), histories: map[int][]counterCall{}, inFlight: map[int]int{},
		outcomes: map[string]int{}, checked: porcupine.Ok, records: map[string][]string{}}
	for i, cc := range clients {
		var opts []counter.Option
		if i%2 == 1 {
			opts = append(opts, counter.PromotedToLock("/chaos/counter-lock"))
		}
		w.opts = append(w.opts, opts)
		if _, err := w.counter(cc, 0, opts); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// counter is the epoch's counter, through client cc.
func (w *counterWorkload) counter(cc *chaosClient, epoch int, opts []counter.Option) (*counter.Counter, error) {
	return counter.New(cc.c, fmt.Sprintf("/chaos/counter-%d", epoch), opts...)
}

func (w *counterWorkload) epoch() int { return int(time.Since(w.began) / counterEpoch) }

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
	cc := w.clients[i]
	var n *counter.Counter
	epoch := -1
	var last int64     // the last value this client saw
	var prevCall int64 // when its previous call began
	session := cc.c.SessionID()
	bound := readBound{session: session}
	for ctx.Err() == nil {
		// The epoch is read and the call counted in flight at once, so that retire,
		// which looks at both under the same lock, never checks a counter with a call
		// still to come.
		w.mu.Lock()
		e := w.epoch()
		w.inFlight[e]++
		w.mu.Unlock()
		if e != epoch {
			var err error
			if n, err = w.counter(cc, e, w.opts[i]); err != nil {
				w.classify("new counter", err)
				w.landed(e, nil)
				return
			}
			epoch, last = e, 0
		}
		octx, cancel := context.WithTimeout(ctx, 10*time.Second)
		call := w.now()
		// A read sees at least what its own session has seen (readBound); a new
		// session may reach a server that has seen less, so its reads are placed
		// anywhere before their return. strict is the placement the run used
		// before, after the previous call whatever it was: checked too, for the record.
		now := cc.c.SessionID()
		lostAfter := func(d int64) bool { return cc.lostSince(w.began.Add(time.Duration(d))) }
		strict := prevCall
		if now != session || lostAfter(prevCall) {
			strict, session = 0, now
		}
		readFrom := bound.place(now, lostAfter)
		prevCall = call
		var op porcupine.Operation
		var callErr error
		switch p := rng.Float64(); {
		case p < 0.75:
			delta := 1 + rng.Int64N(1000)
			r, err := n.Add(octx, delta)
			out := addOutput{pre: r.Pre, post: r.Post}
			out.failed, out.unknown = w.classify("add", err)
			op = porcupine.Operation{ClientId: i, Input: addInput{delta}, Call: call, Output: out}
			if err == nil {
				last = r.Post
				bound.wrote(now, call)
			}
			callErr = err
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
				bound.wrote(now, call)
			case err == nil: // decided on a read
				op.Call = readFrom
			}
			callErr = err
		default:
			v, err := n.Get(octx)
			if _, unknown := w.classify("get", err); err != nil || unknown {
				cancel()
				w.landed(epoch, nil) // a failed read tells nothing
				continue
			}
			last = v
			op = porcupine.Operation{ClientId: i, Input: getInput{}, Call: readFrom, Output: v}
		}
		cancel()
		op.Return = w.now()
		if unknownOutcome(op.Output) {
			op.Return = math.MaxInt64
		}
		rec := counterCall{op: op, strict: strict, session: now}
		if callErr != nil {
			rec.err = callErr.Error()
		}
		w.landed(epoch, &rec)
		pause(ctx, between(rng, 0, 10*time.Millisecond))
	}
}

// landed records a call of the epoch's counter that is over, and its operation if
// it tells something.
func (w *counterWorkload) landed(epoch int, c *counterCall) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.inFlight[epoch]--
	if c != nil {
		w.histories[epoch] = append(w.histories[epoch], *c)
		w.calls++
	}
}

// retire checks and deletes, every counterEpoch until ctx ends, the counters that no
// client can call any more: their epoch is over by a whole epoch (so that a write
// whose outcome was unknown has long landed or been dropped) and none of their calls
// is in flight. A counter that cannot be read now, under the faults, waits for the
// next round, or for finish.
func (w *counterWorkload) retire(ctx context.Context) {
	for pause(ctx, counterEpoch) {
		w.mu.Lock()
		var done []int
		for e := range w.histories {
			if e < w.epoch()-1 && w.inFlight[e] == 0 {
				done = append(done, e)
			}
		}
		w.mu.Unlock()
		for _, e := range done {
			if ctx.Err() != nil || w.check(ctx, e) != nil {
				break
			}
		}
		_ = w.deleteChecked(ctx)
	}
}

// check reads the epoch's counter's final value with an add of 0, a conditional
// write and so a linearizable read, after every other call but the open ones; checks
// the counter's history with it; deletes the counter; and forgets its history.
func (w *counterWorkload) check(ctx context.Context, epoch int) error {
	cc := w.clients[0]
	n, err := w.counter(cc, epoch, nil)
	if err != nil {
		return err
	}
	octx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	call := w.now()
	r, err := n.Add(octx, 0)
	if err != nil {
		return fmt.Errorf("counter: the final read of %s: %w", n.Path(), err)
	}
	final := porcupine.Operation{ClientId: len(w.clients), Input: addInput{0}, Call: call,
		Output: addOutput{pre: r.Pre, post: r.Post}, Return: w.now()}
	w.mu.Lock()
	calls := append(slices.Clip(w.histories[epoch]), counterCall{op: final, strict: final.Call, session: cc.c.SessionID()})
	w.mu.Unlock()
	began := time.Now()
	history := counterOps(calls, false)
	verdict := porcupine.CheckOperationsTimeout(counterModel, history, time.Minute)
	strictOnly := false
	if verdict == porcupine.Ok {
		strictOnly = porcupine.CheckOperationsTimeout(counterModel, counterOps(calls, true), time.Minute) == porcupine.Illegal
	}
	took := time.Since(began)
	var files []string
	if verdict == porcupine.Illegal || strictOnly {
		name, ops := fmt.Sprintf("counter-%d", epoch), history
		if strictOnly {
			name, ops = name+"-strict", counterOps(calls, true)
		}
		files = w.record(name, n.Path(), calls, ops)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.histories, epoch)
	delete(w.inFlight, epoch)
	// Deleted apart from the check: a delete that fails under the faults may have
	// been done, and a second check would make the counter again, at 0.
	w.undeleted = append(w.undeleted, n.Path())
	w.counters++
	w.took += took
	if files != nil {
		w.records[n.Path()] = files
	}
	if strictOnly {
		w.strictOnly = append(w.strictOnly, n.Path())
	}
	switch {
	case verdict == porcupine.Illegal:
		w.checked = porcupine.Illegal
		w.illegal = append(w.illegal, span{node: n.Path(), from: w.began.Add(time.Duration(epoch) * counterEpoch), to: time.Now()})
	case verdict == porcupine.Unknown:
		w.undecided++
		if w.checked == porcupine.Ok {
			w.checked = porcupine.Unknown
		}
	}
	return nil
}

// record writes a counter's history and its visualization into w.dir, and returns
// the files' paths, or a line saying why there are none.
func (w *counterWorkload) record(name, node string, calls []counterCall, ops []porcupine.Operation) []string {
	w.mu.Lock()
	if w.dir == "" {
		d, err := os.MkdirTemp("", "chaos-counters-")
		if err != nil {
			w.mu.Unlock()
			return []string{"(not written: " + err.Error() + ")"}
		}
		w.dir = d
	}
	dir := w.dir
	w.mu.Unlock()
	files, err := writeCounterHistory(dir, name, node, calls, ops, w.began)
	if err != nil {
		files = append(files, "(not all written: "+err.Error()+")")
	}
	return files
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

// deleteChecked deletes the counters checked so far; those it cannot delete now stay
// on the list.
func (w *counterWorkload) deleteChecked(ctx context.Context) error {
	w.mu.Lock()
	paths := w.undeleted
	w.undeleted = nil
	w.mu.Unlock()
	var errs []error
	for _, p := range paths {
		octx, cancel := context.WithTimeout(ctx, wait)
		err := w.clients[0].c.Delete(octx, p, -1)
		cancel()
		if err != nil && !errors.Is(err, framework.ErrNoNode) {
			w.mu.Lock()
			w.undeleted = append(w.undeleted, p)
			w.mu.Unlock()
			errs = append(errs, fmt.Errorf("counter: delete %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// finish checks and deletes the counters retire has not, after every call is over;
// the run must not leave them behind.
func (w *counterWorkload) finish(ctx context.Context) error {
	w.mu.Lock()
	left := slices.Sorted(maps.Keys(w.histories))
	w.mu.Unlock()
	for _, epoch := range left {
		if err := w.check(ctx, epoch); err != nil {
			return err
		}
	}
	return w.deleteChecked(ctx)
}

// problems are the violations: histories that are not linearizable, or that the
// checker could not decide. Those made while the servers lost acknowledged writes
// are explained by the loss instead: no client can keep a counter's history when the
// ensemble forgets part of it.
func (w *counterWorkload) problems(losses []serverLoss) (problems, explained []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.illegal {
		p := fmt.Sprintf("counter: the history of %s (%s to %s) is not linearizable", s.node, s.from.Format(stamp), s.to.Format(stamp))
		if files := w.records[s.node]; files != nil {
			p += "; its calls and porcupine's view of them: " + strings.Join(files, ", ")
		}
		if s.explainedBy(losses) {
			explained = append(explained, p+", and a loss above happened meanwhile")
		} else {
			problems = append(problems, p)
		}
	}
	if w.undecided > 0 {
		problems = append(problems, fmt.Sprintf("counter: the checker could not decide on the histories of %d of the %d counters within its time limit", w.undecided, w.counters))
	}
	return problems, explained
}

func (w *counterWorkload) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	verdict := map[porcupine.CheckResult]string{porcupine.Ok: "linearizable", porcupine.Illegal: "NOT linearizable", porcupine.Unknown: "undecided"}[w.checked]
	s := fmt.Sprintf("counter: %d calls by %d clients on %d counters, a new one every %v (%s); histories %s (porcupine, %v)",
		w.calls, len(w.clients), w.counters, counterEpoch, sortedCounts(w.outcomes), verdict, w.took.Round(time.Millisecond))
	if len(w.strictOnly) > 0 {
		s += fmt.Sprintf("; %d of them linearizable only with each read after its session's last acknowledged write, not after its client's previous call:", len(w.strictOnly))
		for _, node := range w.strictOnly {
			s += fmt.Sprintf(" %s (%s)", node, strings.Join(w.records[node], ", "))
		}
	}
	return s
}
