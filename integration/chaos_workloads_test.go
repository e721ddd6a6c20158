package integration

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/zkrecipes/zkrecipes/integration/internal/holds"
	"github.com/zkrecipes/zkrecipes/recipes/election"
	"github.com/zkrecipes/zkrecipes/recipes/mutex"
	"github.com/zkrecipes/zkrecipes/recipes/rwlock"
	"github.com/zkrecipes/zkrecipes/recipes/semaphore"
)

// held is what every recipe gives a holder: the mutex, either side of the rwlock, a
// semaphore lease, and (through leadership) a leader latch.
type held = holds.Held

// A workload is one recipe at one path, used by its own clients in a loop of
// acquire, work, release, and the record of what they believed.
type workload struct {
	name     string
	path     string
	clients  []*chaosClient
	register *fencedRegister // nil where holders share (the semaphore)
	rule     exclusion
	// exclusive marks the holds whose fencing tokens must grow from one to the next.
	exclusive func(*hold) bool
	// acquire is client i's next acquisition, and its kind.
	acquire func(ctx context.Context, i int, rng *rand.Rand) (held, string, error)

	// calm closes when the fault schedule ends: holds end at once from then on, so
	// that the waiters go through (the liveness check).
	calm <-chan struct{}

	mu         sync.Mutex
	holds      []*hold
	attempts   []attempt
	failures   map[string]int
	violations []string
}

func (w *workload) fail(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.violations = append(w.violations, fmt.Sprintf(format, args...))
}

func (w *workload) failure(kind string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.failures[kind]++
}

func mutexWorkload(clients []*chaosClient) (*workload, error) {
	w := newWorkload("mutex", "/chaos/mutex", clients, atMost(1))
	ms, err := perClient(clients, func(cc *chaosClient) (*mutex.Mutex, error) {
		return mutex.New(cc.c, w.path, mutex.WithID(cc.name))
	})
	w.acquire = func(ctx context.Context, i int, _ *rand.Rand) (held, string, error) {
		return ms[i], "lock", ms[i].Acquire(ctx)
	}
	return w, err
}

func rwlockWorkload(clients []*chaosClient) (*workload, error) {
	w := newWorkload("rwlock", "/chaos/rwlock", clients, writerAlone)
	w.exclusive = func(h *hold) bool { return h.kind == "write" }
	ls, err := perClient(clients, func(cc *chaosClient) (*rwlock.RWLock, error) {
		return rwlock.New(cc.c, w.path, rwlock.WithID(cc.name))
	})
	w.acquire = func(ctx context.Context, i int, rng *rand.Rand) (held, string, error) {
		if rng.Float64() < 0.3 {
			return ls[i].WriteLock(), "write", ls[i].WriteLock().Acquire(ctx)
		}
		return ls[i].ReadLock(), "read", ls[i].ReadLock().Acquire(ctx)
	}
	return w, err
}

// The semaphore's holders share, so there is no register; the limit is the check.
func semaphoreWorkload(clients []*chaosClient, leases int) (*workload, error) {
	w := newWorkload("semaphore", "/chaos/semaphore", clients, atMost(leases))
	w.register, w.exclusive = nil, nil
	ss, err := perClient(clients, func(cc *chaosClient) (*semaphore.Semaphore, error) {
		return semaphore.New(cc.c, w.path, leases, semaphore.WithID(cc.name))
	})
	w.acquire = func(ctx context.Context, i int, _ *rand.Rand) (held, string, error) {
		ls, err := ss[i].Acquire(ctx, 1)
		if err != nil {
			return nil, "lease", err
		}
		return ls[0], "lease", nil
	}
	return w, err
}

func electionWorkload(clients []*chaosClient) (*workload, error) {
	w := newWorkload("election", "/chaos/election", clients, atMost(1))
	w.acquire = func(ctx context.Context, i int, _ *rand.Rand) (held, string, error) {
		l, err := lead(ctx, clients[i], w.path)
		return l, "leader", err
	}
	return w, nil
}

// perClient makes each client's own recipe value.
func perClient[T any](clients []*chaosClient, mk func(*chaosClient) (T, error)) ([]T, error) {
	vs := make([]T, len(clients))
	for i, cc := range clients {
		v, err := mk(cc)
		if err != nil {
			return nil, err
		}
		vs[i] = v
	}
	return vs, nil
}

func newWorkload(name, path string, clients []*chaosClient, rule exclusion) *workload {
	return &workload{
		name: name, path: path, clients: clients, rule: rule,
		register:  &fencedRegister{},
		exclusive: func(*hold) bool { return true },
		failures:  map[string]int{},
	}
}

var errLeadershipGone = errors.New("leadership went before its token was read")

// leadership is one term of a leader latch as a hold: it begins when the latch
// leads and ends when it stops leading; Release leaves the election.
type leadership struct {
	l        *election.Latch
	token    int64
	node     string
	lost     chan struct{}
	lostOnce sync.Once
	stop     func()
}

// lead joins the election at path with a new latch and returns once it leads.
func lead(ctx context.Context, cc *chaosClient, path string) (*leadership, error) {
	l, err := election.NewLatch(cc.c, path, election.WithID(cc.name))
	if err != nil {
		return nil, err
	}
	ld := &leadership{l: l, lost: make(chan struct{})}
	// Listening before Start: no change of leadership goes unheard.
	ld.stop = l.Listen(func(isLeader bool) {
		if !isLeader {
			ld.markLost()
		}
	})
	err = l.Start(ctx)
	if err == nil {
		err = l.Await(ctx)
	}
	if err != nil {
		_ = ld.Release(context.WithoutCancel(ctx))
		return nil, err
	}
	ld.token, ld.node = l.FencingToken(), l.Node()
	if ld.token == 0 { // leadership went again before we could read it: no term
		_ = ld.Release(context.WithoutCancel(ctx))
		return nil, errLeadershipGone
	}
	return ld, nil
}

func (ld *leadership) markLost()             { ld.lostOnce.Do(func() { close(ld.lost) }) }
func (ld *leadership) Lost() <-chan struct{} { return ld.lost }
func (ld *leadership) FencingToken() int64   { return ld.token }
func (ld *leadership) Node() string          { return ld.node }
func (ld *leadership) Release(ctx context.Context) error {
	ld.stop()
	ld.markLost()
	return ld.l.Close(ctx)
}

// work runs client i's loop until ctx ends: acquire, write to the register while
// holding (briefly, now and then for seconds, so that faults find holders), check,
// release.
func (w *workload) work(ctx context.Context, i int, rng *rand.Rand, ids *idSource) {
	cc := w.clients[i]
	for ctx.Err() == nil {
		// Not cut short when the run ends: an acquisition under way then must still
		// end, holding or by its own deadline (the liveness check).
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		asked := time.Now()
		hd, kind, err := w.acquire(actx, i, rng)
		cancel()
		w.attempted(asked, err)
		if err != nil {
			switch {
			case ctx.Err() != nil:
			case errors.Is(err, context.DeadlineExceeded):
				w.failure("acquire timed out (10 s)")
			default:
				w.failure("acquire failed")
			}
			continue
		}
		h := &hold{id: ids.next(), client: cc, kind: kind, node: hd.Node(), token: hd.FencingToken(), start: time.Now(),
			session: cc.c.SessionID()}
		lostAt := watchLost(hd.Lost())
		cc.holding.Store(true)
		w.checkGrant(context.WithoutCancel(ctx), h, hd.Lost())
		w.hold(h, hd.Lost(), rng)
		h.end = time.Now()
		cc.holding.Store(false)
		w.checkEnd(h, hd.Lost())
		rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		releasing := time.Now()
		if err := hd.Release(rctx); err != nil {
			w.failure("release reported the hold lost or failed")
		}
		cancel()
		if t := <-lostAt; t.Before(releasing) {
			h.lostAt = t
		}
		w.mu.Lock()
		w.holds = append(w.holds, h)
		w.mu.Unlock()
		pause(ctx, between(rng, 0, 20*time.Millisecond))
	}
}

// watchLost sends when lost closed (every hold's Lost closes by the end of its
// Release).
func watchLost(lost <-chan struct{}) <-chan time.Time {
	at := make(chan time.Time, 1)
	go func() {
		<-lost
		at <- time.Now()
	}()
	return at
}

// checkGrant makes sure a new hold stands on a node that exists, so on a live
// session, and that session is the client's. If not (the session may have ended
// since), Lost must close within the session timeout and a second; else the recipe
// said "held" on a dead or foreign session's node and never took it back.
func (w *workload) checkGrant(ctx context.Context, h *hold, lost <-chan struct{}) {
	pctx, cancel := context.WithTimeout(ctx, h.client.timeout)
	defer cancel()
	ok, st, err := h.client.c.Exists(pctx, h.node)
	switch {
	case err != nil:
		w.failure("grant not checked (no answer)")
		return
	case ok:
		h.session = st.EphemeralOwner
		if st.EphemeralOwner == h.client.c.SessionID() {
			return
		}
	}
	t := time.NewTimer(h.client.timeout + time.Second)
	defer t.Stop()
	select {
	case <-lost:
	case <-t.C:
		w.fail("%v was granted on a node gone or not of the client's session, and Lost did not close", h)
	case <-ctx.Done():
	}
}

// hold writes to the register every few milliseconds for the hold's planned length,
// stopping at once when Lost closes, as a worker would that is never told otherwise,
// or when the faults are over.
func (w *workload) hold(h *hold, lost <-chan struct{}, rng *rand.Rand) {
	length := between(rng, 5*time.Millisecond, 40*time.Millisecond)
	if rng.Float64() < 0.1 { // long enough to outlast a session timeout
		length = between(rng, time.Second, 8*time.Second)
	}
	deadline := time.NewTimer(length)
	defer deadline.Stop()
	for {
		select {
		case <-lost:
			return
		case <-deadline.C:
			return
		case <-w.calm:
			return
		case <-time.After(between(rng, 2*time.Millisecond, 10*time.Millisecond)):
		}
		select {
		case <-lost: // a holder that knows it lost must not write
			return
		default:
		}
		if w.register != nil && w.exclusive(h) {
			w.register.write(h)
		}
	}
}

// checkEnd asks, once the hold is over, whether its node still exists: then it is
// live. An error (the connection is still down) counts as no: the hold is then not
// known to be live, and is not held to exclusion. A node gone while its session is
// still the client's, with no Lost heard, was deleted under a live holder who was
// never told.
func (w *workload) checkEnd(h *hold, lost <-chan struct{}) {
	cc := h.client
	ctx, cancel := context.WithTimeout(context.Background(), 2*cc.timeout)
	defer cancel()
	before := cc.c.SessionID()
	ok, _, err := cc.c.Exists(ctx, h.node)
	h.live = err == nil && ok
	if err != nil || ok || before != h.session || cc.c.SessionID() != h.session || cc.lostSince(h.start) {
		return
	}
	select {
	case <-lost:
	default:
		w.fail("%v: the node vanished while its session lived, and Lost did not close", h)
	}
}

type idSource struct {
	mu sync.Mutex
	n  int
}

func (s *idSource) next() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	return s.n
}
