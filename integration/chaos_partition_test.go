package integration

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/zkrecipes/zkrecipes/recipes/partition"
)

// partitionRun is one Partitioner per client sharing partitionItems at
// /chaos/partition under the faults. Each item is a workload of its own, whose holds
// are the runs of its work: from the moment work starts until its ctx ends, writing
// to the item's fenced register meanwhile. So the run's checks hold for every item:
// no two live works of one item at once, tokens that grow with every owner, and a
// work's ctx ending within the session timeout and a second of its session's loss.
// Once the faults stop, every item must be run by exactly one member again.
type partitionRun struct {
	items   []*workload
	members []*partition.Partitioner
	settled time.Duration // from the end of the faults until every item was seen run once
	problem string
}

const partitionPath = "/chaos/partition"

var partitionItems = []string{"job-0", "job-1", "job-2", "job-3", "job-4", "job-5"}

func newPartitionRun(ctx context.Context, clients []*chaosClient, ids *idSource) (*partitionRun, error) {
	pr := &partitionRun{}
	byName := map[string]*workload{}
	for _, it := range partitionItems {
		w := newWorkload("part/"+it, path.Join(partitionPath, "items", it), clients, atMost(1))
		pr.items = append(pr.items, w)
		byName[it] = w
	}
	for _, cc := range clients {
		work := func(ctx context.Context, it partition.Item) error {
			byName[it.Name].run(ctx, cc, it.FencingToken, ids)
			return nil
		}
		p, err := partition.New(cc.c, partitionPath, work, partition.WithID(cc.name), partition.Items(partitionItems...))
		if err == nil {
			err = p.Start(ctx)
		}
		if err != nil {
			pr.close(ctx)
			return nil, err
		}
		pr.members = append(pr.members, p)
	}
	return pr, nil
}

// run is one run of an item's work by cc, recorded as a hold that lasts until ctx
// ends: work's ctx is the Lost of the item's lock.
func (w *workload) run(ctx context.Context, cc *chaosClient, token int64, ids *idSource) {
	h := &hold{id: ids.next(), client: cc, kind: "item", token: token, start: time.Now(), session: cc.c.SessionID()}
	// When ctx ended, as a goroutine waiting on it saw it: told apart from h.end,
	// it shows whether the signal came late or the holder was slow to act on it.
	signalled := make(chan time.Time, 1)
	stop := context.AfterFunc(ctx, func() { signalled <- time.Now() })
	h.node = holderNode(ctx, cc, w.path)
	w.checkGrant(context.Background(), h, ctx.Done())
	for ctx.Err() == nil {
		w.register.write(h)
		pause(ctx, 5*time.Millisecond)
	}
	h.end = time.Now()
	h.lostAt = h.end
	if !stop() {
		h.signalled = <-signalled
	}
	w.checkEnd(h, ctx.Done())
	w.mu.Lock()
	w.holds = append(w.holds, h)
	w.mu.Unlock()
}

// holderNode is the path of the first node of the lock queue at lock: the holder's.
// Its owner is checked by checkGrant. "" when the queue cannot be read.
func holderNode(ctx context.Context, cc *chaosClient, lock string) string {
	lctx, cancel := context.WithTimeout(ctx, cc.timeout)
	defer cancel()
	names, _, err := cc.c.Children(lctx, lock)
	if err != nil || len(names) == 0 {
		return ""
	}
	seq := func(n string) string { return n[max(0, len(n)-10):] } // the server's %010d
	slices.SortFunc(names, func(a, b string) int { return strings.Compare(seq(a), seq(b)) })
	return path.Join(lock, names[0])
}

// settle waits, once the faults have stopped (at stopped), until every item runs in
// exactly one member, as Owned says.
func (pr *partitionRun) settle(ctx context.Context, stopped time.Time) {
	pr.settled, pr.problem = settleAfter(ctx, stopped, 50*time.Millisecond, func() string {
		count := map[string]int{}
		for _, p := range pr.members {
			for _, it := range p.Owned() {
				count[it]++
			}
		}
		ok := len(count) == len(partitionItems)
		for _, n := range count {
			ok = ok && n == 1
		}
		if ok {
			return ""
		}
		return fmt.Sprintf("items not owned exactly once %v after the faults stopped: %v", wait, count)
	})
}

func (pr *partitionRun) close(ctx context.Context) {
	closeAll(ctx, pr.members)
}

func (pr *partitionRun) report() string {
	runs := 0
	for _, w := range pr.items {
		runs += len(w.holds)
	}
	if pr.problem != "" {
		return "partition: " + pr.problem + "\n"
	}
	return fmt.Sprintf("partition: %d items over %d members, %d runs of work; every item run by exactly one member within %v of the faults stopping\n",
		len(partitionItems), len(pr.members), runs, pr.settled.Round(time.Millisecond))
}
