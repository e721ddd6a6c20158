package driver

import (
	"context"
	"fmt"
	"runtime"
	"time"
)

// measure runs one trial of w by c and reads the server around it: the requests it
// received during Run, and for a queue, its watches once every waiter waits (and,
// for a contender in this process, our goroutines and heap then).
func measure(ctx context.Context, tg *target, c contender, w workload) (measurement, error) {
	ctx, cancel := context.WithTimeout(ctx, budget(w))
	defer cancel()
	dirs := []string{w.Path}
	if w.Kind == counting {
		dirs = append(dirs, w.Path+"/locks", w.Path+"/leases")
	}
	if err := tg.mkdirs(ctx, dirs...); err != nil {
		return measurement{}, err
	}
	if w.Kind == counterAdds {
		if err := tg.prepareCounter(ctx, w); err != nil {
			return measurement{}, err
		}
	}
	t, err := c.Prepare(ctx, w)
	if err != nil {
		return measurement{}, fmt.Errorf("prepare: %w", err)
	}
	defer t.Close()
	if rc, ok := t.(requestCounter); ok {
		rc.countRequests(tg.requests)
	}

	var m measurement
	// The watches the sessions hold before any waiter queues (Curator's on
	// /zookeeper/config, one a session), so that the queue's time is its waiters'.
	base, _, err := tg.watches(ctx)
	if err != nil {
		return measurement{}, err
	}
	var baseGoroutines int
	var baseHeap uint64
	if w.Kind == queue && c.InProcess() {
		baseGoroutines, baseHeap = footprint()
	}
	var bytes0 int64
	queued := func(ctx context.Context) error {
		if w.Kind != queue {
			return nil // a cache's load: nothing to look at here
		}
		start := time.Now()
		watches, each, reached, err := awaitWatches(ctx, tg, base+w.Waiters)
		m.Watches, m.WatchesByMember, m.QueueTime = watches, each, reached
		if reached == 0 {
			m.QueueTime = time.Since(start)
		}
		if err == nil {
			m.LockWatches, err = tg.watchesUnder(ctx, w.Path)
		}
		if err == nil {
			var b int64
			b, err = tg.responseBytes(ctx)
			m.QueueBytes = b - bytes0
		}
		if c.InProcess() {
			g, h := footprint()
			m.Goroutines = float64(g-baseGoroutines) / float64(w.Waiters)
			m.Heap = (float64(h) - float64(baseHeap)) / float64(w.Waiters)
		}
		return err
	}
	if bytes0, err = tg.responseBytes(ctx); err != nil {
		return measurement{}, err
	}
	before, err := tg.packets(ctx)
	if err != nil {
		return measurement{}, err
	}
	words := tg.wordsSent()
	cpu0 := c.CPU()
	server0, server := tg.serverCPU()
	machine0 := sampleCPU()
	res, err := t.Run(ctx, queued)
	if err != nil {
		return measurement{}, fmt.Errorf("run: %w", err)
	}
	m.OtherLoad = othersBusy(machine0, sampleCPU())
	m.ClientCPU = c.CPU() - cpu0
	if server1, ok := tg.serverCPU(); ok && server {
		m.ServerCPU = server1 - server0
	} else {
		m.ServerCPU = -1
	}
	after, err := tg.packets(ctx)
	if err != nil {
		return measurement{}, err
	}
	// The reading that ends the count, and the wchs polls of a queue, are ours.
	m.Res = res
	m.PacketsByMember = make([]int64, len(after))
	for i, words1 := range tg.wordsSent() {
		m.PacketsByMember[i] = after[i] - before[i] - tg.perWord*(words1-words[i])
		m.Packets += m.PacketsByMember[i]
	}
	// Read after the words were counted: this reading's word is not a contender's.
	bytes1, err := tg.responseBytes(ctx)
	if err != nil {
		return measurement{}, err
	}
	m.Bytes = bytes1 - bytes0
	if w.Kind == counterAdds {
		if m.LockTakes, err = tg.checkCounter(ctx, w, res.Total); err != nil {
			return measurement{}, err
		}
	}
	return m, nil
}

// requestCounter is a trial that reads the servers' request count itself, around
// each of the parts of its run that it measures (a partition's changes).
type requestCounter interface {
	countRequests(read func(context.Context) (int64, error))
}

// requests is how many requests the servers have received so far, less the
// driver's own four-letter words (this reading's included): the difference of two
// readings is what the contenders sent in between.
func (t *target) requests(ctx context.Context) (int64, error) {
	ps, err := t.packets(ctx)
	if err != nil {
		return 0, err
	}
	var n int64
	for i, words := range t.wordsSent() {
		n += ps[i] - t.perWord*words
	}
	return n, nil
}

// budget bounds a trial, in case something hangs: generous, since a hang is a bug
// to report, not a figure.
func budget(w workload) time.Duration {
	switch w.Kind {
	case cycles:
		return 2*time.Minute + time.Duration(w.Cycles+w.Warmup)*20*time.Millisecond
	case handover:
		return time.Minute + time.Duration(w.Rounds)*(w.Settle+time.Second)
	case queue:
		return 2*time.Minute + time.Duration(w.Waiters)*100*time.Millisecond
	case partitionJoin, partitionLeave, partitionLoss:
		return 2*time.Minute + time.Duration(w.Members+2*w.Rounds)*30*time.Second
	}
	return w.Duration + 2*time.Minute
}

// footprint is this process's goroutines and live heap, after a collection.
func footprint() (int, uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return runtime.NumGoroutine(), ms.HeapAlloc
}

// awaitWatches polls wchs until the server holds at least want watches and the
// count has been still for a moment (so that a contender that sets more than one
// per waiter shows them all), or until the count has been still for long (one that
// sets fewer). reached is how long it took to reach want, 0 if it never did.
func awaitWatches(ctx context.Context, tg *target, want int) (watches int, each []int, reached time.Duration, err error) {
	const (
		poll      = 10 * time.Millisecond
		settled   = 300 * time.Millisecond
		givenUp   = 5 * time.Second
		longestAt = 2 * time.Minute
	)
	start := time.Now()
	last, changed := -1, start
	for {
		w, ws, err := tg.watches(ctx)
		if err != nil {
			return 0, nil, 0, err
		}
		now := time.Now()
		if w != last {
			last, changed = w, now
		}
		watches, each = w, ws
		if w >= want && reached == 0 {
			reached = now.Sub(start)
		}
		still := now.Sub(changed)
		switch {
		case reached > 0 && still >= settled:
			return watches, each, reached, nil
		case w > 0 && still >= givenUp:
			return watches, each, 0, nil
		case now.Sub(start) > longestAt:
			return watches, each, 0, fmt.Errorf("only %d watches of %d waiters after %v", w, want, longestAt)
		}
		select {
		case <-time.After(poll):
		case <-ctx.Done():
			return watches, each, 0, ctx.Err()
		}
	}
}
