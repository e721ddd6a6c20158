package rwlock

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

func TestReadersShareWritersExclude(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	const clients, iterations = 8, 100
	var readers, writers, maxReaders atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := range clients {
		c := newClient(t, []string{srv.Addr()})
		l := newRW(t, c, "/locks/rw", WithID(fmt.Sprint("c", i)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range iterations {
				write := rand.IntN(10) == 0
				lock := l.ReadLock()
				if write {
					lock = l.WriteLock()
				}
				if err := lock.Acquire(ctx); err != nil {
					errs <- err
					return
				}
				if write {
					if writers.Add(1) != 1 || readers.Load() != 0 {
						errs <- fmt.Errorf("a writer is not alone")
					}
					writers.Add(-1)
				} else {
					r := readers.Add(1)
					if writers.Load() != 0 {
						errs <- fmt.Errorf("a reader beside a writer")
					}
					for m := maxReaders.Load(); r > m && !maxReaders.CompareAndSwap(m, r); m = maxReaders.Load() {
					}
					// Stay a moment in the lock so that readers can meet.
					_, _, _ = c.Exists(ctx, "/locks/rw")
					readers.Add(-1)
				}
				if err := lock.Release(ctx); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Greater(t, maxReaders.Load(), int32(1), "readers held the lock together")
}

func TestReaderAfterAWaitingWriterWaitsForIt(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	first := newRW(t, c, "/locks/fair")
	require.NoError(t, first.ReadLock().Acquire(ctx))

	writer := newRW(t, newClient(t, []string{srv.Addr()}), "/locks/fair")
	var order []string
	var mu sync.Mutex
	record := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		if writer.WriteLock().Acquire(ctx) == nil {
			record("writer")
			_ = writer.WriteLock().Release(ctx)
		}
	}()
	queued(t, c, "/locks/fair", 2)

	reader := newRW(t, newClient(t, []string{srv.Addr()}), "/locks/fair")
	ok, err := reader.ReadLock().TryAcquire(ctx)
	require.NoError(t, err)
	require.False(t, ok, "a reader does not pass a waiting writer, though a reader holds")
	go func() {
		defer wg.Done()
		if reader.ReadLock().Acquire(ctx) == nil {
			record("reader")
			_ = reader.ReadLock().Release(ctx)
		}
	}()
	queued(t, c, "/locks/fair", 3)
	require.NoError(t, first.ReadLock().Release(ctx))
	wg.Wait()
	require.Equal(t, []string{"writer", "reader"}, order)
}

func TestDowngrade(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	l := newRW(t, c, "/locks/down")
	require.NoError(t, l.WriteLock().Acquire(ctx))
	require.NoError(t, l.ReadLock().Acquire(ctx), "the write lock's holder reads at once")
	require.NoError(t, l.WriteLock().Release(ctx))
	require.True(t, l.ReadLock().IsAcquired())
	require.False(t, l.WriteLock().IsAcquired())

	other := newRW(t, newClient(t, []string{srv.Addr()}), "/locks/down")
	ok, err := other.ReadLock().TryAcquire(ctx)
	require.NoError(t, err)
	require.True(t, ok, "another reader shares the downgraded lock")
	require.NoError(t, other.ReadLock().Release(ctx))
	require.NoError(t, l.ReadLock().Release(ctx))
	require.Empty(t, children(t, c, "/locks/down"))
}

func TestContendingDowngradeKeepsTheWriterBlocked(t *testing.T) {
	// Curator's CURATOR-621.
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	l := newRW(t, c, "/locks/cd")
	require.NoError(t, l.WriteLock().Acquire(ctx))

	writer := newRW(t, newClient(t, []string{srv.Addr()}), "/locks/cd")
	acquired := make(chan error, 1)
	go func() { acquired <- writer.WriteLock().Acquire(ctx) }()
	queued(t, c, "/locks/cd", 2)

	require.NoError(t, l.ReadLock().Acquire(ctx))
	require.NoError(t, l.WriteLock().Release(ctx))
	// The queued writer, woken by the write node's deletion if it watched that, must
	// find our read node in its place and watch it: it stays blocked while we read.
	readNode := l.ReadLock().Node()
	require.Eventually(t, func() bool {
		out, err := srv.FourLetter(ctx, "wchp")
		return err == nil && strings.Contains(out, readNode)
	}, wait, 5*time.Millisecond, "the writer watches our read node")
	ps, err := writer.WriteLock().Participants(ctx)
	require.NoError(t, err)
	require.Len(t, ps, 1)
	require.False(t, ps[0].Holder)
	select {
	case err := <-acquired:
		t.Fatalf("the writer got in during the downgraded read (err %v)", err)
	default:
	}
	require.False(t, writer.WriteLock().IsAcquired())

	require.NoError(t, l.ReadLock().Release(ctx))
	require.NoError(t, <-acquired)
	require.NoError(t, writer.WriteLock().Release(ctx))
}

func TestUpgradeFailsAtOnce(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	l := newRW(t, newClient(t, []string{srv.Addr()}), "/locks/up")
	require.NoError(t, l.ReadLock().Acquire(ctx))
	require.ErrorIs(t, l.WriteLock().Acquire(ctx), ErrUpgrade)
	_, err := l.WriteLock().TryAcquire(ctx)
	require.ErrorIs(t, err, ErrUpgrade)
	require.NoError(t, l.ReadLock().Release(ctx))
	require.NoError(t, l.WriteLock().Acquire(ctx), "after the read is released, writing is fine")
	require.NoError(t, l.WriteLock().Release(ctx))
}

func TestParticipantsBySide(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	var readers []*RWLock
	for range 20 {
		l := newRW(t, c, "/locks/parts")
		require.NoError(t, l.ReadLock().Acquire(ctx))
		readers = append(readers, l)
	}
	waitCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range 8 {
		l := newRW(t, c, "/locks/parts")
		wg.Add(1)
		go func() { defer wg.Done(); _ = l.WriteLock().Acquire(waitCtx) }()
	}
	queued(t, c, "/locks/parts", 28)
	reads, err := readers[0].ReadLock().Participants(ctx)
	require.NoError(t, err)
	writes, err := readers[0].WriteLock().Participants(ctx)
	require.NoError(t, err)
	require.Len(t, reads, 20)
	require.Len(t, writes, 8)
	for _, p := range reads {
		require.True(t, p.Holder)
	}
	for _, p := range writes {
		require.False(t, p.Holder)
	}
	cancel()
	wg.Wait()
	for _, l := range readers {
		require.NoError(t, l.ReadLock().Release(ctx))
	}
	require.Empty(t, children(t, c, "/locks/parts"))
}

func TestNodeNames(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	for _, tt := range []struct {
		opts        []Option
		read, write string
	}{
		{nil, "read-", "write-"},
		{[]Option{WithCuratorNames()}, "__READ__", "__WRIT__"},
	} {
		l := newRW(t, c, "/locks/names", tt.opts...)
		require.NoError(t, l.WriteLock().Acquire(ctx))
		require.Regexp(t, regexp.MustCompile(`/_c_[0-9a-f-]{36}-`+tt.write+`\d{10}$`), l.WriteLock().Node())
		require.NoError(t, l.WriteLock().Release(ctx))
		require.NoError(t, l.ReadLock().Acquire(ctx))
		require.Regexp(t, regexp.MustCompile(`/_c_[0-9a-f-]{36}-`+tt.read+`\d{10}$`), l.ReadLock().Node())
		require.NoError(t, l.ReadLock().Release(ctx))
	}
}

func TestHolderSessionExpiry(t *testing.T) {
	srv := zkrtest.Server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	ctx := testCtx(t)
	victim := newRW(t, newClient(t, []string{proxy.Addr()}, framework.WithSessionTimeout(2*time.Second)), "/locks/exp")
	require.NoError(t, victim.WriteLock().Acquire(ctx))

	c := newClient(t, []string{srv.Addr()})
	reader := newRW(t, c, "/locks/exp")
	acquired := make(chan error, 1)
	go func() { acquired <- reader.ReadLock().Acquire(ctx) }()
	queued(t, c, "/locks/exp", 2)

	require.NoError(t, proxy.ExpireSession(ctx, 2*time.Second))
	select {
	case <-victim.WriteLock().Lost():
	case <-time.After(wait):
		t.Fatal("Lost did not close")
	}
	require.NoError(t, <-acquired, "the queue moves on")
	require.ErrorIs(t, victim.WriteLock().Release(ctx), ErrLost)
	require.NoError(t, reader.ReadLock().Release(ctx))
	require.Empty(t, children(t, c, "/locks/exp"), "nothing orphaned")
}

func TestNoDowngradeFromALostWriteLock(t *testing.T) {
	srv := zkrtest.Server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	ctx := testCtx(t)
	victim := newRW(t, newClient(t, []string{proxy.Addr()}, framework.WithSessionTimeout(2*time.Second)), "/locks/nd")
	require.NoError(t, victim.WriteLock().Acquire(ctx))

	c := newClient(t, []string{srv.Addr()})
	writer := newRW(t, c, "/locks/nd")
	acquired := make(chan error, 1)
	go func() { acquired <- writer.WriteLock().Acquire(ctx) }()
	queued(t, c, "/locks/nd", 2)
	require.NoError(t, proxy.ExpireSession(ctx, 2*time.Second))
	require.NoError(t, <-acquired, "the other writer holds once the victim's session is gone")

	ok, err := victim.ReadLock().TryAcquire(ctx)
	require.NoError(t, err)
	require.False(t, ok, "a lost write lock downgrades to nothing while another writer holds")
	require.True(t, writer.WriteLock().IsAcquired())
	require.NoError(t, writer.WriteLock().Release(ctx))
}

// A holder whose node another client deletes loses its hold as soon as the deletion
// is heard, whichever side it holds: the participant behind it, on the same
// connection, is granted only once the old holder knows. A writer deleted lets a
// reader in; a reader deleted lets a writer in.
func TestADeletedNodeEndsTheHold(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	op := newClient(t, []string{srv.Addr()})
	for _, tc := range []struct {
		name          string
		holder, after func(*RWLock) *Lock
	}{
		{"writer", (*RWLock).WriteLock, (*RWLock).ReadLock},
		{"reader", (*RWLock).ReadLock, (*RWLock).WriteLock},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := "/rw/deleted-" + tc.name
			holder, after := tc.holder(newRW(t, c, p)), tc.after(newRW(t, c, p))
			require.NoError(t, holder.Acquire(ctx))
			work, cancel := holder.Context(ctx)
			defer cancel()
			granted := make(chan error, 1)
			go func() { granted <- after.Acquire(ctx) }()
			queued(t, op, p, 2)

			zkrtest.DeleteHolder(t, op, holder.Node())
			require.NoError(t, <-granted)
			require.False(t, holder.IsAcquired(), "the old holder knew before the next was granted")
			zkrtest.RequireLostToDeletion(t, work, ErrLost)
			require.ErrorIs(t, holder.Release(ctx), ErrLost)
			require.True(t, after.IsAcquired())
			require.NoError(t, after.Release(ctx))
		})
	}
}
