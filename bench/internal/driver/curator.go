package driver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// javaFlags are the peer JVM's: a heap that the largest workload needs a fraction
// of, and the serial collector, which suits two cores and a small heap (the
// ZooKeeper server that zktest starts runs the same way). heapMB, 0 for 256, is
// larger for the scale curves, whose largest group holds a million cached members.
func javaFlags(heapMB int) []string {
	if heapMB == 0 {
		heapMB = 256
	}
	return []string{fmt.Sprintf("-Xmx%dm", heapMB), "-XX:+UseSerialGC"}
}

// curatorPeer is Apache Curator, driven through the Java peer's bench subcommand
// (bench/curator-peer/CuratorPeer.java): one JVM for the whole benchmark, so that
// its code is as warm as ours, and fresh sessions for every trial.
type curatorPeer struct {
	*process
	broken  error  // set when the conversation went out of step: the peer is not used again
	version string // what the peer says it runs: "curator=5.7.1 zookeeper=3.9.3"
	classes string
	flags   []string // the JVM's
}

// startCurator starts the peer; classes is the directory of CuratorPeer.class, built
// by `make curator-peer` with the class path it runs with in the file classpath.
func startCurator(ctx context.Context, classes, addr string, heapMB int) (*curatorPeer, error) {
	jars, err := os.ReadFile(filepath.Join(classes, "classpath"))
	if err != nil {
		return nil, fmt.Errorf("the Curator peer is not built (run `make curator-peer`): %w", err)
	}
	cp := classes + ":" + strings.TrimSpace(string(jars))
	out, err := exec.CommandContext(ctx, "java", "-cp", cp, "CuratorPeer", "version").Output()
	if err != nil {
		return nil, fmt.Errorf("the Curator peer's version: %w", err)
	}
	version := strings.TrimPrefix(strings.TrimSpace(string(out)), "VERSION ")
	flags := javaFlags(heapMB)
	args := append(append([]string{}, flags...), "-cp", cp, "CuratorPeer", "bench", addr)
	proc, err := startProcess("java", args...)
	if err != nil {
		return nil, fmt.Errorf("the Curator peer: %w", err)
	}
	p := &curatorPeer{process: proc, version: version, classes: classes, flags: flags}
	if _, err := p.expect(ctx, "READY"); err != nil {
		_ = p.Close()
		return nil, err
	}
	return p, nil
}

func (p *curatorPeer) Name() string       { return "Curator" }
func (p *curatorPeer) InProcess() bool    { return false }
func (p *curatorPeer) CPU() time.Duration { return p.cpu() }

// Close ends the peer: end of input makes it exit.
func (p *curatorPeer) Close() error {
	p.close()
	return nil
}

// errPeer is a failure the peer reported (an ERROR line); the trial is then over.
var errPeer = errors.New("curator peer")

// expect returns the next line, which must start with prefix. After an ERROR line
// it waits for the CLOSED that ends the trial; after anything else unexpected the
// peer is out of step and not used again.
func (p *curatorPeer) expect(ctx context.Context, prefix string) (string, error) {
	select {
	case line, ok := <-p.lines:
		switch {
		case !ok:
			p.broken = fmt.Errorf("%w: exited while we waited for %s", errPeer, prefix)
			return "", p.broken
		case strings.HasPrefix(line, "ERROR"):
			p.closed(ctx)
			return "", fmt.Errorf("%w: %s", errPeer, line)
		case !strings.HasPrefix(line, prefix):
			p.broken = fmt.Errorf("%w: said %q where we waited for %s", errPeer, line, prefix)
			return "", p.broken
		}
		return line, nil
	case <-ctx.Done():
		p.broken = fmt.Errorf("%w: waiting for %s: %w", errPeer, prefix, ctx.Err())
		return "", p.broken
	}
}

// closed waits for the CLOSED that follows an ERROR.
func (p *curatorPeer) closed(ctx context.Context) {
	for {
		select {
		case line, ok := <-p.lines:
			if !ok || line == "CLOSED" {
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

func (p *curatorPeer) Prepare(ctx context.Context, w workload) (trial, error) {
	if p.broken != nil {
		return nil, p.broken
	}
	cmd, err := w.command()
	if err != nil {
		return nil, err
	}
	if err := p.send(cmd); err != nil {
		return nil, err
	}
	if _, err := p.expect(ctx, "SET"); err != nil {
		return nil, err
	}
	return &curatorTrial{p: p, w: w}, nil
}

type curatorTrial struct {
	p    *curatorPeer
	w    workload
	over bool // the peer has ended the trial itself (after an ERROR)
}

// peerResult is the RESULT line's JSON.
type peerResult struct {
	Ops    int     `json:"ops"`
	Total  int     `json:"total"`
	Reads  int     `json:"reads"`
	Writes int     `json:"writes"`
	Nanos  int64   `json:"nanos"`
	Lat    []int64 `json:"lat"`
	Heap   float64 `json:"heap"`
	Failed int     `json:"failed"`
	// Changer is the session id of the trial's changing session (group-join's joiner,
	// discovery-register's writer).
	Changer int64 `json:"changer"`
}

func (t *curatorTrial) Run(ctx context.Context, queued func(context.Context) error) (result, error) {
	r, err := t.run(ctx, queued)
	if errors.Is(err, errPeer) {
		t.over = true
	}
	return r, err
}

func (t *curatorTrial) run(ctx context.Context, queued func(context.Context) error) (result, error) {
	p := t.p
	if err := p.send("go"); err != nil {
		return result{}, err
	}
	var qerr error
	switch t.w.Kind {
	case queue, handover: // queued looks at the server once every waiter or candidate waits
		if _, err := p.expect(ctx, "QUEUED"); err != nil {
			return result{}, err
		}
		qerr = queued(ctx)
		if err := p.send("drain"); err != nil {
			return result{}, err
		}
	case cacheLoad, cacheLoadTree: // queued looks at the server while the copy is open
		if _, err := p.expect(ctx, "LOADED"); err != nil {
			return result{}, err
		}
		qerr = queued(ctx)
		if err := p.send("count"); err != nil {
			return result{}, err
		}
	}
	line, err := p.expect(ctx, "RESULT ")
	if err != nil {
		return result{}, err
	}
	if qerr != nil {
		return result{}, qerr
	}
	var pr peerResult
	if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "RESULT ")), &pr); err != nil {
		return result{}, fmt.Errorf("curator peer: bad result %q: %w", line, err)
	}
	r := result{Ops: pr.Ops, Total: pr.Total, Reads: pr.Reads, Writes: pr.Writes, Elapsed: time.Duration(pr.Nanos), Heap: pr.Heap, Failed: pr.Failed, Changer: pr.Changer}
	for _, ns := range pr.Lat {
		r.Latencies = append(r.Latencies, time.Duration(ns))
	}
	return r, nil
}

// Close ends the trial's sessions in the peer. The driver always runs a prepared
// trial before closing it: the peer expects "go" first.
func (t *curatorTrial) Close() {
	if t.over || t.p.broken != nil {
		return
	}
	// The peer closes its recipes and sessions one at a time: a thousand group members
	// took more than a minute on a busy machine, and a close cut short leaves the peer
	// out of step, and its closes in the next trial's counts.
	w := t.w
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute+time.Duration(max(w.sessions(), w.Members, w.Nodes))*250*time.Millisecond)
	defer cancel()
	if t.p.send("close") == nil {
		_, _ = t.p.expect(ctx, "CLOSED")
	}
}
