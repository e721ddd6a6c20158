package integration

import (
	"fmt"
	"slices"
	"time"
)

// An attempt is one acquisition of the chaos run, from the call to its return.
type attempt struct {
	start, end time.Time
	held       bool
}

func (w *workload) attempted(start time.Time, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.attempts = append(w.attempts, attempt{start, time.Now(), err == nil})
}

// livenessLimit is how long after the last fault every acquisition must have ended,
// held or given up by its own deadline: a session timeout for the sessions that the
// faults cost to end, and a few seconds for the queues to move.
const livenessLimit = chaosSessionTimeout + 5*time.Second

// afterFaults are the waits of the acquisitions under way when the faults stopped, or
// begun after: how long after lastFault each ended, longest first.
func afterFaults(ws []*workload, lastFault time.Time) []time.Duration {
	var ds []time.Duration
	for _, w := range ws {
		for _, a := range w.attempts {
			if a.end.After(lastFault) {
				ds = append(ds, a.end.Sub(lastFault))
			}
		}
	}
	slices.Sort(ds)
	slices.Reverse(ds)
	return ds
}

// stuck finds the acquisitions that were still waiting livenessLimit after the last
// fault.
func stuck(ws []*workload, lastFault time.Time) []string {
	var problems []string
	for _, w := range ws {
		for _, a := range w.attempts {
			if a.end.Sub(lastFault) > livenessLimit {
				problems = append(problems, fmt.Sprintf("%s: an acquisition begun at %s was still waiting %v after the last fault (ended %s, held: %v)",
					w.name, a.start.Format("15:04:05.000"), livenessLimit, a.end.Format("15:04:05.000"), a.held))
			}
		}
	}
	return problems
}

// livenessLine is the report's line on liveness.
func livenessLine(ws []*workload, lastFault time.Time) string {
	ds := afterFaults(ws, lastFault)
	longest := time.Duration(0)
	if len(ds) > 0 {
		longest = ds[0]
	}
	return fmt.Sprintf("liveness: %d acquisitions under way when the faults stopped or begun after; the longest ended %v after the last fault (allowed: %v)\n",
		len(ds), longest.Round(time.Millisecond), livenessLimit)
}

// spread says "median m, at most x" of ds, or "(none)".
func spread(ds []time.Duration) string {
	if len(ds) == 0 {
		return "(none)"
	}
	ds = slices.Sorted(slices.Values(ds))
	return fmt.Sprintf("median %v, at most %v", ds[len(ds)/2].Round(time.Millisecond), ds[len(ds)-1].Round(time.Millisecond))
}
