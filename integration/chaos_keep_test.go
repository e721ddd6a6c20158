package integration

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zkrecipes/zkrecipes/zktest"
)

var (
	chaosKeep = flag.String("chaos.keep", "", "where a run that finds a violation or a server data loss keeps the servers' data directories "+
		"(snapshots and transaction logs), its fault log and the writes the servers acknowledged, for scripts/txnlog.sh")
	chaosKeepAll = flag.Bool("chaos.keepall", false, "with -chaos.keep, keep them after a run that finds nothing too (make soak KEEP=all)")
)

// runDir is where a run keeps its record: a directory of its own under dir, named
// by its start (UTC) and seed, so that no run overwrites or removes another's; "" when
// dir is.
func runDir(dir string, began time.Time, seed uint64) string {
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, fmt.Sprintf("%s-seed-%d", began.UTC().Format("20060102T150405Z"), seed))
}

// writeRecords writes the run's own record into dir: the fault log, the witness's
// acknowledged writes and the servers' version. It runs as soon as the workloads are
// over, before the clients close, so that a run that hangs on its way out (a
// 50-minute soak on 3.8.0 did, in a client's Close) still leaves it; a run that
// keeps nothing removes dir at its end.
func writeRecords(dir, version string, f *faults, w *witnessWorkload) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var acked strings.Builder
	acked.WriteString("# called\tacknowledged\tnode\tclient\tzxid\tversion\tdata\n")
	for _, a := range w.writes() {
		fmt.Fprintf(&acked, "%s\t%s\t%s\t%s\t%#x\t%d\t%s\n", a.call.UTC().Format(keepStamp), a.at.UTC().Format(keepStamp), w.path, a.client, a.zxid, a.version, a.data)
	}
	files := map[string]string{"faults.log": f.logText(), "acked.tsv": acked.String(), "zookeeper-version": version + "\n"}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// keep completes the records in dir with the report, and moves the servers'
// directories there, stopping them. The times are UTC, to the microsecond, so that
// they compare as text.
func (r *report) keep(dir string, e *zktest.Ensemble) error {
	if err := os.WriteFile(filepath.Join(dir, "report.txt"), []byte(r.String()), 0o644); err != nil {
		return err
	}
	return e.CloseKeeping(dir)
}

const keepStamp = "2006-01-02T15:04:05.000000Z07:00"

// faultEvent is one line of the fault log.
type faultEvent struct {
	at   time.Time
	what string
}

// note adds a line to the fault log.
func (f *faults) note(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, faultEvent{time.Now(), fmt.Sprintf(format, args...)})
}

// logText is the fault log, one event a line, in the order they happened.
func (f *faults) logText() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var b strings.Builder
	for _, ev := range f.events {
		fmt.Fprintf(&b, "%s %s\n", ev.at.UTC().Format(keepStamp), ev.what)
	}
	return b.String()
}
