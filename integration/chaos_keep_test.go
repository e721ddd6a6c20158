package integration

import (
	"errors"
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

// records are the run's own record: the fault log, the witness's acknowledged writes
// and the servers' version. They are written into dir as soon as the workloads are
// over, before the clients close, so that a run that hangs on its way out (a 50-minute
// soak on 3.8.0 did, in a client's Close) still leaves them.
var records = []string{"faults.log", "acked.tsv", "zookeeper-version"}

func writeRecords(dir, version string, f *faults, w *witnessWorkload) error {
	if err := dropKept(dir); err != nil { // an earlier run's
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var acked strings.Builder
	acked.WriteString("# called\tacknowledged\tnode\tclient\tzxid\tversion\tdata\n")
	for _, a := range w.writes() {
		fmt.Fprintf(&acked, "%s\t%s\t%s\t%s\t%#x\t%d\t%s\n", a.call.UTC().Format(keepStamp), a.at.UTC().Format(keepStamp), w.path, a.client, a.zxid, a.version, a.data)
	}
	for i, text := range []string{f.logText(), acked.String(), version + "\n"} {
		if err := os.WriteFile(filepath.Join(dir, records[i]), []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// dropKept removes what a run keeps from dir: the records, the report and the
// servers' directories. A run that keeps nothing leaves nothing there.
func dropKept(dir string) error {
	servers, _ := filepath.Glob(filepath.Join(dir, "server[0-9]"))
	var errs []error
	for _, name := range append(append(servers, records...), "report.txt") {
		errs = append(errs, os.RemoveAll(filepath.Join(dir, filepath.Base(name))))
	}
	return errors.Join(errs...)
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
