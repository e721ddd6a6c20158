package driver

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/recipes/counter"
)

// counterAdds: Sessions sessions, one counter each (promoted to a lock), loop
// Add(1) on one counter node for Duration; the counter is at Path/count, its lock at
// Path/lock (issue 14).
const counterAdds kind = "counter"

const (
	counterNode = "count"
	counterLock = "lock"
)

// counterSessions are the sessions of the counter scenarios.
var counterSessions = []int{1, 8, 32}

// counterScenarios are the counter's adds against Curator's DistributedAtomicLong,
// both promoted to a lock and retried alike (BoundedExponentialBackoff 10 ms to 1 s,
// 10 retries, the default of ours); optional, as the cache's.
func counterScenarios(s Settings) []scenario {
	var list []scenario
	for _, n := range counterSessions {
		list = append(list, scenario{
			id: fmt.Sprintf("counter-%d", n),
			title: fmt.Sprintf("Counter: %d sessions each add 1 in a loop to one counter for %v, both contenders promoted to a lock "+
				"and retrying alike (bounded exponential backoff from 10 ms to 1 s, 10 retries: our default, Curator's "+
				"BoundedExponentialBackoffRetry(10, 1000, 10) for the optimistic tries and under the lock); the counter's final "+
				"value must equal the adds applied; the lock's takes are its node's child changes (cversion) over two", n, s.Duration),
			work:     workload{Kind: counterAdds, Sessions: n, Duration: s.Duration},
			who:      []string{recipesName, curatorName},
			optional: true,
			metrics: []metric{
				rateMetric(fmt.Sprintf("counter-%d-rate", n), fmt.Sprintf("counter, %d sessions (adds/s)", n), func(r result) int { return r.Ops }),
				requestsMetric(fmt.Sprintf("counter-%d-requests", n), fmt.Sprintf("requests per add, %d sessions", n)),
				cpuMetric(fmt.Sprintf("counter-%d-client-cpu", n), fmt.Sprintf("client CPU per add, %d sessions (µs)", n), false),
				{id: fmt.Sprintf("counter-%d-locked", n), label: fmt.Sprintf("adds that took the lock, %d sessions (%%)", n), format: fmtFloat2,
					value: func(m measurement) float64 { return percentOf(m.LockTakes, m.Res.Total) }},
				{id: fmt.Sprintf("counter-%d-failed", n), label: fmt.Sprintf("adds that gave up, %d sessions (%%)", n), format: fmtFloat2,
					value: func(m measurement) float64 { return percentOf(m.Res.Failed, m.Res.Total+m.Res.Failed) }},
			},
		})
	}
	return list
}

func percentOf(part, whole int) float64 {
	if whole == 0 {
		return 0
	}
	return 100 * float64(part) / float64(whole)
}

// prepareCounter makes the counter's node, holding 0, and its lock's parent, as
// persistent nodes, so that neither contender's first add creates anything and the
// lock's child changes count only its takes.
func (t *target) prepareCounter(ctx context.Context, w workload) error {
	if err := t.mkdirs(ctx, path.Join(w.Path, counterLock)); err != nil {
		return err
	}
	return t.admin(ctx, func(conn *zk.Conn) error {
		_, err := conn.Create(path.Join(w.Path, counterNode), make([]byte, 8), 0, openACL)
		return err
	})
}

// checkCounter reads the counter after a trial: its value must be the adds the
// contender says it applied. It returns how often the lock was taken: each take
// creates one child of the lock's node and deletes it again.
func (t *target) checkCounter(ctx context.Context, w workload, applied int) (lockTakes int, err error) {
	err = t.admin(ctx, func(conn *zk.Conn) error {
		data, _, err := conn.Get(path.Join(w.Path, counterNode))
		if err != nil {
			return err
		}
		if len(data) != 8 {
			return fmt.Errorf("the counter holds %d bytes", len(data))
		}
		if v := int64(binary.BigEndian.Uint64(data)); v != int64(applied) {
			return fmt.Errorf("the counter is at %d after %d adds applied", v, applied)
		}
		_, st, err := conn.Get(path.Join(w.Path, counterLock))
		if err != nil {
			return err
		}
		lockTakes = int(st.Cversion) / 2
		return nil
	})
	return lockTakes, err
}

// counterTrial is zkrecipes' counter workload: one session and one Counter each.
type counterTrial struct {
	w        workload
	sessions []goSession
	counters []*counter.Counter
}

func (g *goContender) prepareCounter(ctx context.Context, w workload) (trial, error) {
	if g.name != recipesName {
		return nil, errUnsupported
	}
	ss, err := g.dialAll(ctx, w.Sessions)
	if err != nil {
		return nil, err
	}
	t := &counterTrial{w: w, sessions: ss}
	for _, s := range ss {
		c, err := counter.New(s.(*recipesSession).c, path.Join(w.Path, counterNode), counter.PromotedToLock(path.Join(w.Path, counterLock)))
		if err != nil {
			t.Close()
			return nil, err
		}
		t.counters = append(t.counters, c)
	}
	return t, nil
}

func (t *counterTrial) Close() { closeAll(t.sessions) }

// Run adds 1 in a loop on every session for the workload's duration; then every
// session finishes the add it is in. An add that gave up is counted, not an error.
func (t *counterTrial) Run(ctx context.Context, _ func(context.Context) error) (result, error) {
	var stop atomic.Bool
	var ops, total, failed atomic.Int64
	errs := make(chan error, len(t.counters))
	var wg sync.WaitGroup
	deadline := time.Now().Add(t.w.Duration)
	for _, c := range t.counters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				_, err := c.Add(ctx, 1)
				switch {
				case errors.Is(err, counter.ErrGaveUp):
					failed.Add(1)
					continue
				case err != nil:
					errs <- err
					stop.Store(true)
					return
				}
				total.Add(1)
				if time.Now().Before(deadline) {
					ops.Add(1)
				}
			}
		}()
	}
	if err := runFor(ctx, t.w.Duration, &stop, &wg, errs); err != nil {
		return result{}, err
	}
	return result{Ops: int(ops.Load()), Total: int(total.Load()), Failed: int(failed.Load()), Elapsed: t.w.Duration}, nil
}

// counterGoals adds issue 14's counter targets (check is Report.goals's).
func counterGoals(check func(text string, ids []string, ok func(rw row) (float64, bool), show func(id string, v float64) string)) {
	var rates, requests []string
	for _, n := range counterSessions {
		rates = append(rates, fmt.Sprintf("counter-%d-rate", n))
		requests = append(requests, fmt.Sprintf("counter-%d-requests", n))
	}
	sessions := func(id string) string { return strings.Split(id, "-")[1] + " sessions" }
	check("counter throughput ≥ 1.2× Curator's DistributedAtomicLong", rates,
		func(rw row) (float64, bool) { v := rw.ratio(recipesName, curatorName); return v, v >= 1.2 },
		func(id string, v float64) string { return fmt.Sprintf("%.2f× at %s", v, sessions(id)) })
	// No more requests per add, to the hundredth the table shows: a stray packet in
	// thousands of adds is not a request more per add.
	check("counter requests per add ≤ Curator's", requests,
		func(rw row) (float64, bool) {
			return rw.ratio(recipesName, curatorName), math.Round(100*rw.value(recipesName)) <= math.Round(100*rw.value(curatorName))
		},
		func(id string, v float64) string { return fmt.Sprintf("%.2f× at %s", v, sessions(id)) })
}
