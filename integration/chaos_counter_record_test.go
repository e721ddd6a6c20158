package integration

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// counterCall is one call of a counter as the run recorded it: its operation for
// the checker, and what the record of a failing history shows beside it.
type counterCall struct {
	op porcupine.Operation
	// strict is where a read was placed before the run knew better: at the start of
	// the client's previous call, whatever that call was (0 in a new session). The
	// history is checked that way too, to count the histories that only ZooKeeper's
	// weaker read guarantee makes linearizable (readBound).
	strict  int64
	session int64
	err     string // the call's error, "" if none
}

// isRead says whether the call was decided on a read: a get, or a compare-and-set
// refused on the value it read.
func (c counterCall) isRead() bool {
	switch out := c.op.Output.(type) {
	case int64:
		return true
	case casOutput:
		return !out.swapped && !out.failed && !out.unknown
	}
	return false
}

// counterOps are the calls' operations; strict places the reads as the run did
// before readBound.
func counterOps(calls []counterCall, strict bool) []porcupine.Operation {
	ops := make([]porcupine.Operation, len(calls))
	for i, c := range calls {
		ops[i] = c.op
		if strict && c.isRead() {
			ops[i].Call = c.strict
		}
	}
	return ops
}

// readBound is where a client's next read may be placed in its counter's history.
// ZooKeeper serves a read from whichever server the session is connected to, which
// may lag behind the leader; all it promises is that the server has seen everything
// this session has seen. So a read reflects at least the state at the call of the
// last write this session had acknowledged (whose zxid the session then carries),
// and nothing more: not another client's write that finished before the read was
// called, nor one before the client's previous read or its failed call, whose answers
// came from the same lagging server or none. A read in a new session may reflect any
// state before it returns.
type readBound struct {
	session int64 // the session the bound holds for
	from    int64 // the call of the last write acknowledged in it, as time since the run began
}

// place returns where a read called now in session may be placed; lostAfter says
// whether the client went Lost after a time since the run began.
func (b *readBound) place(session int64, lostAfter func(int64) bool) int64 {
	if session != b.session || lostAfter(b.from) {
		b.session, b.from = session, 0
	}
	return b.from
}

// wrote records a write acknowledged in the session, called at call.
func (b *readBound) wrote(session, call int64) {
	if session == b.session {
		b.from = max(b.from, call)
	}
}

// counterHistoryText is a counter's history as the run recorded it, one call a line
// in the order they were called, with wall-clock times (UTC) from began.
func counterHistoryText(node string, calls []counterCall, began time.Time) string {
	stamp := func(d int64) string {
		switch d {
		case math.MaxInt64:
			return "open" + strings.Repeat(" ", len(keepStamp)-4)
		}
		return began.Add(time.Duration(d)).UTC().Format(keepStamp)
	}
	sorted := slices.SortedStableFunc(slices.Values(calls), func(a, b counterCall) int { return cmp.Compare(a.op.Call, b.op.Call) })
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: every recorded call, by call time (a read's call is where it may be placed: see readBound)\n", node)
	b.WriteString("# call\treturn\tclient\tsession\tinput\toutput\tread placed before at\terror\n")
	for _, c := range sorted {
		strict := "-"
		if c.isRead() {
			strict = stamp(c.strict)
		}
		fmt.Fprintf(&b, "%s\t%s\t%d\t%#x\t%+v\t%+v\t%s\t%s\n", stamp(c.op.Call), stamp(c.op.Return), c.op.ClientId, c.session,
			c.op.Input, c.op.Output, strict, c.err)
	}
	return b.String()
}

// writeCounterHistory writes a failing counter's history into dir as name.txt, and
// porcupine's visualization of it as name.html, and returns their paths.
func writeCounterHistory(dir, name, node string, calls []counterCall, ops []porcupine.Operation, began time.Time) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	text := filepath.Join(dir, name+".txt")
	if err := os.WriteFile(text, []byte(counterHistoryText(node, calls, began)), 0o644); err != nil {
		return nil, err
	}
	_, info := porcupine.CheckOperationsVerbose(counterModel, ops, time.Minute)
	html := filepath.Join(dir, name+".html")
	if err := porcupine.VisualizePath(counterModel, info, html); err != nil {
		return []string{text}, err
	}
	return []string{text, html}, nil
}
