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

// afterFaults are how long each acquisition waited after the last fault (from the
// last fault, or from its start if it began after), for those that ended after it,
// longest first.
func afterFaults(ws []*workload, lastFault time.Time) []time.Duration {
	var ds []time.Duration
	for _, w := range ws {
		for _, a := range w.attempts {
			if a.end.After(lastFault) {
				ds = append(ds, a.end.Sub(later(a.start, lastFault)))
			}
		}
	}
	slices.Sort(ds)
	slices.Reverse(ds)
	return ds
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// stuck finds the acquisitions that waited longer than livenessLimit after the last
// fault.
func stuck(ws []*workload, lastFault time.Time) []string {
	var problems []string
	for _, w := range ws {
		for _, a := range w.attempts {
			if waited := a.end.Sub(later(a.start, lastFault)); a.end.After(lastFault) && waited > livenessLimit {
				problems = append(problems, fmt.Sprintf("%s: an acquisition begun at %s waited %v after the last fault (held in the end: %v)",
					w.name, a.start.Format("15:04:05.000"), waited.Round(time.Millisecond), a.held))
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
	return fmt.Sprintf("liveness: %d acquisitions under way when the faults stopped or begun after; the longest waited %v after the last fault (allowed: %v)\n",
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
