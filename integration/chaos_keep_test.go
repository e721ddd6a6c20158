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

// keep writes the run's own record into dir: the report, the fault log, the witness's
// acknowledged writes and the servers' version; and moves the servers' directories
// there, stopping them. The times are UTC, to the microsecond, so that they compare
// as text.
func (r *report) keep(dir string, e *zktest.Ensemble) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var acked strings.Builder
	acked.WriteString("# called\tacknowledged\tnode\tclient\tzxid\tversion\tdata\n")
	for _, a := range r.witness.writes() {
		fmt.Fprintf(&acked, "%s\t%s\t%s\t%s\t%#x\t%d\t%s\n", a.call.UTC().Format(keepStamp), a.at.UTC().Format(keepStamp), r.witness.path, a.client, a.zxid, a.version, a.data)
	}
	files := map[string]string{
		"report.txt":        r.String(),
		"faults.log":        r.faults.logText(),
		"acked.tsv":         acked.String(),
		"zookeeper-version": r.version + "\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return err
		}
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
