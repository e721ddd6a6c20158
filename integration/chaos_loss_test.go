package integration

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
)

// A serverLoss is evidence that the ensemble acknowledged writes and then served a
// history without them: a node's version (or mzxid) going back, which no client can
// cause on a node that is never deleted. It says nothing against the recipes, and
// excuses nothing they promise: exclusivity and fencing are judged apart.
type serverLoss struct {
	node     string
	from, to time.Time // the lost history was last seen at from, the one served instead at to
	evidence string
}

func (l serverLoss) String() string { return l.node + ": " + l.evidence }

// lossyServers are the ZooKeeper versions known to lose acknowledged writes under
// the chaos run's faults, each with the upstream issue that says how
// (docs/servers.md): on them a loss is reported, with that issue, and not counted as
// a violation, since the run judges the recipes. On any other version (3.9.4 and
// later; 3.9.6 by default) a loss fails the run: it is ours until the servers' logs
// say otherwise.
var lossyServers = map[string]string{
	"3.8.0": "ZOOKEEPER-4643, not fixed on the 3.8 line: its fix, ZOOKEEPER-4394's apache/zookeeper#2152, was never backported there",
	"3.9.3": "ZOOKEEPER-4925, fixed in 3.9.4 by apache/zookeeper#2254 and its backport #2266",
}

// findings are a run's verdict: the recipes' failures, which always count, and the
// server's losses with the counter histories that only a loss explains, which count
// unless the server is a lossy one.
type findings struct {
	failures  []string
	losses    []serverLoss
	explained []string // counter histories not linearizable across a loss
	known     string   // why the servers' version is known to lose writes (lossyServers); "" if it is not
}

func (f findings) violations() int {
	if f.known != "" {
		return len(f.failures)
	}
	return len(f.failures) + len(f.losses) + len(f.explained)
}

// span is the time a counter's history covers, from its epoch's start to its check.
type span struct {
	node     string
	from, to time.Time
}

// explainedBy reports whether a loss happened while s's history was being made.
func (s span) explainedBy(losses []serverLoss) bool {
	return slices.ContainsFunc(losses, func(l serverLoss) bool { return l.from.Before(s.to) && l.to.After(s.from) })
}

// report is the findings' part of the chaos report.
func (f findings) report(version string) string {
	if len(f.losses) == 0 && len(f.explained) == 0 {
		return "server data loss (acknowledged writes the ensemble forgot): none\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "SERVER DATA LOSS: the ensemble acknowledged writes and then served a history without them, %d times:\n", len(f.losses))
	for _, l := range f.losses {
		fmt.Fprintf(&b, "  %v\n", l)
	}
	for _, e := range f.explained {
		fmt.Fprintf(&b, "  %s\n", e)
	}
	if f.known != "" {
		fmt.Fprintf(&b, "  ZooKeeper %s is known to lose acknowledged writes (%s; docs/servers.md): listed, not counted as violations of the recipes\n", version, f.known)
	} else {
		fmt.Fprintf(&b, "  ZooKeeper %s is not known to lose writes: each counts as a violation; read the servers' transaction logs (scripts/txnlog.sh)\n", version)
	}
	return b.String()
}

// witnessWorkload has clients overwrite one plain node under the faults and records
// every write the servers acknowledged, with the zxid and version its Stat gave: the
// writes a lost history shows up in, by zxid, in the servers' transaction logs.
type witnessWorkload struct {
	path    string
	clients []*chaosClient

	mu     sync.Mutex
	acked  []ackedWrite
	failed int
}

// ackedWrite is one write the servers acknowledged to the witness.
type ackedWrite struct {
	client   string
	call, at time.Time // sent, acknowledged
	data     string
	zxid     int64
	version  int32
}

func newWitnessWorkload(ctx context.Context, clients []*chaosClient) (*witnessWorkload, error) {
	w := &witnessWorkload{path: "/chaos/witness", clients: clients}
	if _, err := clients[0].c.Create(ctx, w.path, nil); err != nil && !errors.Is(err, framework.ErrNodeExists) {
		return nil, fmt.Errorf("witness: %w", err)
	}
	return w, nil
}

// work overwrites the node every few tens of milliseconds until ctx ends; each write's
// data names its client and its number, so that it can be found in the servers' logs.
func (w *witnessWorkload) work(ctx context.Context, i int, rng *rand.Rand) {
	cc := w.clients[i]
	for seq := 0; pause(ctx, between(rng, 10*time.Millisecond, 40*time.Millisecond)); seq++ {
		data := fmt.Sprintf("%s/%d", cc.name, seq)
		octx, cancel := context.WithTimeout(ctx, 10*time.Second)
		call := time.Now()
		st, err := cc.c.Set(octx, w.path, []byte(data), -1)
		cancel()
		w.mu.Lock()
		if err == nil {
			w.acked = append(w.acked, ackedWrite{client: cc.name, call: call, at: time.Now(), data: data, zxid: st.Mzxid, version: st.Version})
		} else {
			w.failed++
		}
		w.mu.Unlock()
	}
}

// writes are the writes acknowledged so far.
func (w *witnessWorkload) writes() []ackedWrite {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.acked)
}

func (w *witnessWorkload) finish(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	return w.clients[0].c.Delete(ctx, w.path, -1)
}

func (w *witnessWorkload) String() string {
	acked := w.writes()
	w.mu.Lock()
	defer w.mu.Unlock()
	return fmt.Sprintf("witness: %d writes acknowledged with their zxids (%d failed), versions and zxids only growing: %v\n",
		len(acked), w.failed, len(lostAcks(w.path, acked)) == 0)
}

// lostAcks finds the acknowledged histories the servers went back on: a write sent
// after another was acknowledged must get a higher version and zxid; one that gets a
// lower or equal one was written on a history that lacks the acknowledged one. Each
// loss is reported once, at the first write on the history served instead.
func lostAcks(node string, writes []ackedWrite) []serverLoss {
	byCall := slices.SortedFunc(slices.Values(writes), func(a, b ackedWrite) int { return a.call.Compare(b.call) })
	byAck := slices.SortedFunc(slices.Values(writes), func(a, b ackedWrite) int { return a.at.Compare(b.at) })
	var losses []serverLoss
	var top *ackedWrite // the highest version acknowledged before the write at hand was sent
	var reported *ackedWrite
	j := 0
	for _, b := range byCall {
		for ; j < len(byAck) && byAck[j].at.Before(b.call); j++ {
			if top == nil || byAck[j].version > top.version {
				top = &byAck[j]
			}
		}
		if top == nil || (b.version > top.version && b.zxid > top.zxid) || top == reported {
			continue
		}
		reported = top
		lost := 0
		for _, a := range byAck[:j] {
			if a.version >= b.version {
				lost++
			}
		}
		losses = append(losses, serverLoss{node: node, from: top.at, to: b.at, evidence: fmt.Sprintf(
			"version %d (zxid %#x, acknowledged at %s to %s) after version %d (zxid %#x, acknowledged at %s to %s): %d acknowledged writes gone",
			b.version, b.zxid, b.at.Format(stamp), b.client, top.version, top.zxid, top.at.Format(stamp), top.client, lost)})
	}
	return losses
}

const stamp = "15:04:05.000"
