package multilock

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/mutex"
	"github.com/zkrecipes/zkrecipes/zktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(zkrtest.SharedServer(m)) }

var testCtx = zkrtest.Context

func newClient(t *testing.T, srv *zktest.Server) *framework.Client {
	return zkrtest.Client(t, []string{srv.Addr()})
}

// failing is a lock of the caller's that fails as told.
type failing struct {
	acquireErr, releaseErr error
	released               bool
}

func (f *failing) Acquire(context.Context) error { return f.acquireErr }
func (f *failing) Release(context.Context) error { f.released = true; return f.releaseErr }

func TestAllOrNothing(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	c := newClient(t, srv)
	first, err := mutex.New(c, "/locks/a")
	require.NoError(t, err)
	broken := &failing{acquireErr: errors.New("refused")}
	m, err := New(first, broken)
	require.NoError(t, err)

	err = m.Acquire(ctx)
	require.ErrorIs(t, err, broken.acquireErr)
	require.False(t, first.IsAcquired(), "the lock taken before the failure was released")
	require.False(t, m.IsAcquired())
	names, _, err := c.Children(ctx, "/locks/a")
	require.NoError(t, err)
	require.Empty(t, names)
}

func TestReleaseGoesOnPastFailures(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	c := newClient(t, srv)
	a, _ := mutex.New(c, "/locks/a")
	b, _ := mutex.New(c, "/locks/b")
	broken := &failing{releaseErr: errors.New("cannot release")}
	m, err := New(a, broken, b)
	require.NoError(t, err)
	require.NoError(t, m.Acquire(ctx))
	require.True(t, m.IsAcquired())

	err = m.Release(ctx)
	require.ErrorIs(t, err, broken.releaseErr)
	require.False(t, a.IsAcquired())
	require.False(t, b.IsAcquired())
	require.True(t, broken.released)
	require.ErrorIs(t, m.Release(ctx), ErrNotHeld)
}

func TestOppositeOrdersNeverDeadlock(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	paths := []string{"/locks/x", "/locks/y", "/locks/z"}
	reversed := []string{"/locks/z", "/locks/y", "/locks/x"}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, order := range [][]string{paths, reversed} {
		m, err := NewMutexes(newClient(t, srv), order)
		require.NoError(t, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 30 {
				if err := m.Acquire(ctx); err != nil {
					errs <- err
					return
				}
				if err := m.Release(ctx); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err, "a deadlock would end in the test's deadline")
	}
}

func TestReentrantThroughItsMutexes(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	m, err := NewMutexes(newClient(t, srv), []string{"/locks/r1", "/locks/r2"})
	require.NoError(t, err)
	require.NoError(t, m.Acquire(ctx))
	require.NoError(t, m.Acquire(ctx))
	require.NoError(t, m.Release(ctx))
	require.True(t, m.IsAcquired())
	require.NoError(t, m.Release(ctx))
	require.False(t, m.IsAcquired())
}

// An Acquire whose ctx has ended takes nothing and does not count up, even over
// locks of the caller's that do not look at ctx: one Release then releases.
func TestEndedContextTakesNothing(t *testing.T) {
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	own := &failing{}
	m, err := New(own)
	require.NoError(t, err)
	require.NoError(t, m.Acquire(testCtx(t)))
	require.ErrorIs(t, m.Acquire(ended), context.Canceled)
	require.NoError(t, m.Release(testCtx(t)))
	require.False(t, m.IsAcquired(), "the Acquire whose ctx had ended counted up")
	require.ErrorIs(t, m.Release(testCtx(t)), ErrNotHeld)
}

// When another client deletes the node of one of its locks, the multi-lock no longer
// holds, its Context ends saying which lock and why, and a multi-lock waiting for
// the same locks is granted once the old one lets the others go.
func TestADeletedNodeEndsTheHold(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	c, op := newClient(t, srv), newClient(t, srv)
	paths := []string{"/locks/deleted-a", "/locks/deleted-b"}
	a, err := NewMutexes(c, paths)
	require.NoError(t, err)
	b, err := NewMutexes(c, paths)
	require.NoError(t, err)
	second, err := mutex.New(op, paths[1])
	require.NoError(t, err)
	require.NoError(t, a.Acquire(ctx))
	work, cancel := a.Context(ctx)
	defer cancel()
	granted := make(chan error, 1)
	go func() { granted <- b.Acquire(ctx) }()
	zkrtest.QueueLen(t, op, paths[0], 2)
	parts, err := second.Participants(ctx)
	require.NoError(t, err)

	zkrtest.DeleteHolder(t, op, parts[0].Node)
	<-work.Done()
	require.False(t, a.IsAcquired())
	zkrtest.RequireLostToDeletion(t, work, ErrLost)
	require.ErrorContains(t, context.Cause(work), "lock 2")
	require.ErrorIs(t, a.Release(ctx), mutex.ErrLost)
	require.NoError(t, <-granted)
	require.True(t, b.IsAcquired())
	require.NoError(t, b.Release(ctx))
}

// Release deletes every lock's node in one flight: one round trip, whatever the
// number of locks (issue 45 item 4).
func TestReleaseIsOneRoundTrip(t *testing.T) {
	const del = 2
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	d := zkrtest.NewFlightDialer()
	c := zkrtest.Client(t, []string{srv.Addr()}, framework.WithDialer(d.Dial))
	m, err := NewMutexes(c, []string{"/flights/a", "/flights/b", "/flights/c"})
	require.NoError(t, err)
	require.NoError(t, m.Acquire(ctx))
	t.Cleanup(d.Release)

	// The server's answers are held back: every delete that leaves before one comes
	// is in the first flight. (A holder's watch on its node, sent after its grant,
	// may leave beside them.)
	d.Hold()
	released := make(chan error, 1)
	go func() { released <- m.Release(ctx) }()
	require.Eventually(t, func() bool {
		deletes := 0
		for _, op := range d.Pending() {
			if op == del {
				deletes++
			}
		}
		return deletes == 3
	}, zkrtest.Wait, time.Millisecond, "three deletes in one flight")
	d.Release()
	require.NoError(t, <-released)
}
