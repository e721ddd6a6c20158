package semaphore

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/zkrecipes/recipes/internal/hold"
	"github.com/zkrecipes/zkrecipes/zktest"
)

type acquired struct {
	leases []*Lease
	err    error
}

// acquireAsync runs Acquire on its own goroutine; the result comes on the channel.
func acquireAsync(ctx context.Context, s *Semaphore, n int) <-chan acquired {
	done := make(chan acquired, 1)
	go func() {
		ls, err := s.Acquire(ctx, n)
		done <- acquired{ls, err}
	}()
	return done
}

func await(t *testing.T, done <-chan acquired) acquired {
	t.Helper()
	return zkrtest.Receive(t, done, "the acquisition's return")
}

func TestTenClientsShareThreeLeases(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t)
	const clients, leases, cycles = 10, 3, 3
	ctx := testCtx(t)

	var holding, peak atomic.Int32
	full := make(chan struct{}) // closed when leases holders held at once
	var fullOnce sync.Once
	run := func(s *Semaphore) error {
		for range cycles {
			ls, err := s.Acquire(ctx, 1)
			if err != nil {
				return err
			}
			n := holding.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			if n == leases {
				fullOnce.Do(func() { close(full) })
			}
			// Hold until all leases were held at once. With ten contenders, the holders
			// that wait here are joined by others until three hold, so the peak must
			// reach three; a semaphore that lets a fourth in shows it too. If the
			// peak never reaches three, ctx ends the wait and the test fails.
			select {
			case <-full:
			case <-ctx.Done():
			}
			holding.Add(-1)
			if err := ls[0].Release(ctx); err != nil {
				return err
			}
		}
		return nil
	}

	errs := make(chan error, clients)
	var wg sync.WaitGroup
	for i := range clients {
		s := newSemaphore(t, newClient(t, []string{srv.Addr()}), "/sem", leases, WithID(fmt.Sprint("client-", i)))
		wg.Go(func() { errs <- run(s) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.EqualValues(t, leases, peak.Load(), "at most, and at some point exactly, 3 holders")
	c := newClient(t, []string{srv.Addr()})
	require.Empty(t, children(t, c, "/sem/leases"))
	require.Empty(t, children(t, c, "/sem/locks"))
}

func TestAcquireIsAllOrNothing(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	a := newClient(t, []string{srv.Addr()})
	b := newClient(t, []string{srv.Addr()})
	semA := newSemaphore(t, a, "/sem", 3)
	semB := newSemaphore(t, b, "/sem", 3)

	held, err := semA.Acquire(ctx, 2)
	require.NoError(t, err)
	require.Len(t, held, 2)

	// B gets one lease, waits for a second, and gives the first back at the deadline.
	_, err = semB.Acquire(shortCtx(t), 2)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	eventuallyChildren(t, a, "/sem/leases", path.Base(held[0].Node()), path.Base(held[1].Node()))
	eventuallyChildren(t, a, "/sem/locks")

	require.NoError(t, held[1].Release(ctx))
	got, err := semB.Acquire(ctx, 2)
	require.NoError(t, err)
	require.Len(t, got, 2)
	releaseAll(t, got)
	releaseAll(t, held[:1])
	require.Empty(t, children(t, a, "/sem/leases"))
}

func TestSessionExpiryFreesLeases(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	ctx := testCtx(t)
	const sessionTimeout = 2 * time.Second // the server's tick is 200 ms: granted as asked
	a := newClient(t, []string{proxy.Addr()}, framework.WithSessionTimeout(sessionTimeout))
	b := newClient(t, []string{srv.Addr()})
	semA := newSemaphore(t, a, "/sem", 2)
	semB := newSemaphore(t, b, "/sem", 2)

	held, err := semA.Acquire(ctx, 2)
	require.NoError(t, err)
	_, err = semB.TryAcquire(ctx, 1)
	require.ErrorIs(t, err, ErrNoLeases)

	// B waits for the full count: its first lease node is there.
	done := acquireAsync(ctx, semB, 2)
	require.Eventually(t, func() bool { return count(b, "/sem/leases") == 3 }, wait, 10*time.Millisecond)

	require.NoError(t, proxy.ExpireSession(ctx, sessionTimeout))
	for _, l := range held {
		select {
		case <-l.Lost():
		case <-time.After(wait):
			t.Fatal("Lost did not close after the session expired")
		}
	}
	r := await(t, done)
	require.NoError(t, r.err)
	require.Len(t, r.leases, 2)
	for _, l := range held {
		require.ErrorIs(t, l.Release(ctx), ErrLost)
		require.Less(t, l.FencingToken(), r.leases[0].FencingToken(), "a later lease has a greater token")
	}
	releaseAll(t, r.leases)
}

func TestCancelledAcquireLeavesNoNode(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	a := newClient(t, []string{srv.Addr()})
	holder := newSemaphore(t, a, "/sem", 1)
	held, err := holder.Acquire(ctx, 1)
	require.NoError(t, err)

	// B waits on the leases, holding the internal lock; C waits on that lock.
	ctxB, cancelB := context.WithCancel(ctx)
	ctxC, cancelC := context.WithCancel(ctx)
	doneB := acquireAsync(ctxB, newSemaphore(t, newClient(t, []string{srv.Addr()}), "/sem", 1), 1)
	require.Eventually(t, func() bool { return count(a, "/sem/leases") == 2 }, wait, 10*time.Millisecond)
	doneC := acquireAsync(ctxC, newSemaphore(t, newClient(t, []string{srv.Addr()}), "/sem", 1), 1)
	require.Eventually(t, func() bool { return count(a, "/sem/locks") == 2 }, wait, 10*time.Millisecond)

	cancelB()
	cancelC()
	require.ErrorIs(t, await(t, doneB).err, context.Canceled)
	require.ErrorIs(t, await(t, doneC).err, context.Canceled)
	eventuallyChildren(t, a, "/sem/leases", path.Base(held[0].Node()))
	eventuallyChildren(t, a, "/sem/locks")

	// No orphan blocks the next acquirer.
	releaseAll(t, held)
	got, err := newSemaphore(t, newClient(t, []string{srv.Addr()}), "/sem", 1).Acquire(ctx, 1)
	require.NoError(t, err)
	releaseAll(t, got)
}

func TestClientCloseEndsAWait(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	a := newClient(t, []string{srv.Addr()})
	held, err := newSemaphore(t, a, "/sem", 1).Acquire(ctx, 1)
	require.NoError(t, err)
	b := newClient(t, []string{srv.Addr()})
	done := acquireAsync(ctx, newSemaphore(t, b, "/sem", 1), 1)
	require.Eventually(t, func() bool { return count(a, "/sem/leases") == 2 }, wait, 10*time.Millisecond)

	require.NoError(t, b.Close())
	require.ErrorIs(t, await(t, done).err, framework.ErrClosed)
	eventuallyChildren(t, a, "/sem/leases", path.Base(held[0].Node()))
	eventuallyChildren(t, a, "/sem/locks")
	releaseAll(t, held)
}

func TestTryAcquire(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	a := newClient(t, []string{srv.Addr()})
	b := newClient(t, []string{srv.Addr()})
	semA := newSemaphore(t, a, "/sem", 2)
	semB := newSemaphore(t, b, "/sem", 2)

	held, err := semA.TryAcquire(ctx, 2)
	require.NoError(t, err)
	require.Len(t, held, 2)
	_, err = semB.TryAcquire(ctx, 1)
	require.ErrorIs(t, err, ErrNoLeases)
	require.Len(t, children(t, a, "/sem/leases"), 2, "the failed try left no node")

	require.NoError(t, held[0].Release(ctx))
	_, err = semB.TryAcquire(ctx, 2)
	require.ErrorIs(t, err, ErrNoLeases, "one lease free, two asked")
	require.Len(t, children(t, a, "/sem/leases"), 1, "the lease taken on the way was given back")

	got, err := semB.TryAcquire(ctx, 1)
	require.NoError(t, err)
	require.Len(t, got, 1)
	releaseAll(t, got)
	releaseAll(t, held[1:])
	require.Empty(t, children(t, a, "/sem/leases"))
	require.Empty(t, children(t, a, "/sem/locks"), "TryAcquire does not take the internal lock")
}

func TestCuratorLayoutAndParticipants(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	sem := func(id string) *Semaphore {
		return newSemaphore(t, newClient(t, []string{srv.Addr()}), "/app/sem", 2, WithID(id))
	}
	semA, semB := sem("a"), sem("b")
	la, err := semA.Acquire(ctx, 1)
	require.NoError(t, err)
	lb, err := semB.Acquire(ctx, 1)
	require.NoError(t, err)
	// C waits, so that both its lock node and its lease node exist.
	ctxC, cancelC := context.WithCancel(ctx)
	doneC := acquireAsync(ctxC, sem("c"), 1)
	c := newClient(t, []string{srv.Addr()})
	require.Eventually(t, func() bool {
		return count(c, "/app/sem/leases") == 3 && count(c, "/app/sem/locks") == 1
	}, wait, 10*time.Millisecond)

	leaseRE := regexp.MustCompile(`^_c_[0-9a-f-]{36}-lease-\d{10}$`)
	for _, name := range children(t, c, "/app/sem/leases") {
		require.Regexp(t, leaseRE, name)
	}
	lockRE := regexp.MustCompile(`^_c_[0-9a-f-]{36}-lock-\d{10}$`)
	for _, name := range children(t, c, "/app/sem/locks") {
		require.Regexp(t, lockRE, name)
	}
	require.Equal(t, "/app/sem/leases", path.Dir(la[0].Node()))
	data, _, err := c.Get(ctx, la[0].Node())
	require.NoError(t, err)
	require.Equal(t, "a", string(data), "node data is the id")

	ps, err := semA.Participants(ctx)
	require.NoError(t, err)
	require.Len(t, ps, 3)
	require.Equal(t, Participant{Node: la[0].Node(), ID: "a", Holder: true, FencingToken: la[0].FencingToken()}, ps[0])
	require.Equal(t, Participant{Node: lb[0].Node(), ID: "b", Holder: true, FencingToken: lb[0].FencingToken()}, ps[1])
	require.Equal(t, "c", ps[2].ID)
	require.False(t, ps[2].Holder)

	cancelC()
	require.ErrorIs(t, await(t, doneC).err, context.Canceled)
	releaseAll(t, la)
	releaseAll(t, lb)
	ps, err = semA.Participants(ctx)
	require.NoError(t, err)
	require.Empty(t, ps)
}

func TestMutexIsNotReentrant(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	m := newMutex(t, newClient(t, []string{srv.Addr()}), "/mx")
	other := newMutex(t, newClient(t, []string{srv.Addr()}), "/mx")

	require.NoError(t, m.Acquire(ctx))
	require.ErrorIs(t, m.Acquire(shortCtx(t)), context.DeadlineExceeded, "the holder waits like anyone")
	require.True(t, m.IsAcquired())
	ok, err := other.TryAcquire(ctx)
	require.NoError(t, err)
	require.False(t, ok)
	require.ErrorIs(t, other.Acquire(shortCtx(t)), context.DeadlineExceeded)
	c := newClient(t, []string{srv.Addr()})
	eventuallyChildren(t, c, "/mx/leases", path.Base(m.Node())) // the failed acquisitions left no node
	eventuallyChildren(t, c, "/mx/locks")
	ps, err := other.Participants(ctx)
	require.NoError(t, err)
	require.Equal(t, []Participant{{Node: m.Node(), ID: args.DefaultID(), Holder: true, FencingToken: m.FencingToken()}}, ps)

	// Any goroutine may release it.
	released := make(chan error, 1)
	go func() { released <- m.Release(ctx) }()
	require.NoError(t, <-released)
	require.False(t, m.IsAcquired())
	require.Empty(t, m.Node())
	require.Zero(t, m.FencingToken())
	require.ErrorIs(t, m.Release(ctx), ErrNotHeld)

	ok, err = other.TryAcquire(ctx)
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, other.Release(ctx))
}

func TestMutexExcludes(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	const clients, cycles = 5, 20

	var (
		inside, total atomic.Int32
		overlap       atomic.Bool
		mu            sync.Mutex
		tokens        []int64 // in the order the lock was held
	)
	run := func(m *Mutex) error {
		for range cycles {
			if err := m.Acquire(ctx); err != nil {
				return err
			}
			if inside.Add(1) != 1 {
				overlap.Store(true)
			}
			total.Add(1)
			mu.Lock()
			tokens = append(tokens, m.FencingToken())
			mu.Unlock()
			inside.Add(-1)
			if err := m.Release(ctx); err != nil {
				return err
			}
		}
		return nil
	}
	errs := make(chan error, clients)
	var wg sync.WaitGroup
	for range clients {
		m := newMutex(t, newClient(t, []string{srv.Addr()}), "/mx")
		wg.Go(func() { errs <- run(m) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.False(t, overlap.Load(), "two holders at once")
	require.EqualValues(t, clients*cycles, total.Load())
	require.True(t, slices.IsSorted(tokens), "fencing tokens grow with every holder")
	require.Len(t, slices.Compact(tokens), clients*cycles)
}

// A holder whose lease node another client deletes loses it as soon as the deletion
// is heard: the waiter, on the same connection, is granted only once the old holder
// knows, so no more holders believe they hold than there are leases.
func TestADeletedNodeEndsTheHold(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	op := newClient(t, []string{srv.Addr()})

	t.Run("mutex", func(t *testing.T) {
		a, b := newMutex(t, c, "/sem/deleted-mutex"), newMutex(t, c, "/sem/deleted-mutex")
		require.NoError(t, a.Acquire(ctx))
		work, cancel := a.Context(ctx)
		defer cancel()
		granted := make(chan error, 1)
		go func() { granted <- b.Acquire(ctx) }()
		zkrtest.QueueLen(t, op, "/sem/deleted-mutex/leases", 2)

		zkrtest.DeleteHolder(t, op, a.Node())
		require.NoError(t, <-granted)
		require.False(t, a.IsAcquired(), "the old holder knew before the new one held")
		zkrtest.RequireLostToDeletion(t, work, ErrLost)
		require.ErrorIs(t, a.Release(ctx), ErrLost)
		require.NoError(t, b.Release(ctx))
	})
	t.Run("leases", func(t *testing.T) {
		const p = "/sem/deleted-leases"
		s1, s2 := newSemaphore(t, c, p, 2), newSemaphore(t, c, p, 2)
		held, err := s1.Acquire(ctx, 2)
		require.NoError(t, err)
		work, cancel := held[0].Context(ctx)
		defer cancel()
		granted := make(chan []*Lease, 1)
		go func() {
			l, _ := s2.Acquire(ctx, 1) // nil on an error, which Len below reports
			granted <- l
		}()
		zkrtest.QueueLen(t, op, p+"/leases", 3)

		zkrtest.DeleteHolder(t, op, held[0].Node())
		got := <-granted
		require.Len(t, got, 1)
		require.True(t, hold.Ended(held[0].Lost()), "the lost lease knew before another was granted")
		require.False(t, hold.Ended(held[1].Lost()), "the other lease holds on")
		zkrtest.RequireLostToDeletion(t, work, ErrLost)
		require.ErrorIs(t, held[0].Release(ctx), ErrLost)
		require.NoError(t, held[1].Release(ctx))
		require.NoError(t, got[0].Release(ctx))
	})
}
