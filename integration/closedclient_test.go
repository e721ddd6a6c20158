package integration

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/recipes/barrier"
	"github.com/zkrecipes/zkrecipes/recipes/cache"
	"github.com/zkrecipes/zkrecipes/recipes/counter"
	"github.com/zkrecipes/zkrecipes/recipes/discovery"
	"github.com/zkrecipes/zkrecipes/recipes/election"
	"github.com/zkrecipes/zkrecipes/recipes/group"
	"github.com/zkrecipes/zkrecipes/recipes/multilock"
	"github.com/zkrecipes/zkrecipes/recipes/mutex"
	"github.com/zkrecipes/zkrecipes/recipes/nodes"
	"github.com/zkrecipes/zkrecipes/recipes/partition"
	"github.com/zkrecipes/zkrecipes/recipes/rwlock"
	"github.com/zkrecipes/zkrecipes/recipes/semaphore"
	"github.com/zkrecipes/zkrecipes/recipes/shared"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// blockingCall is one blocking call of a recipe, made by a client of its own at
// path p; the recipe's resources end with the test.
type blockingCall func(t *testing.T, ctx context.Context, c *framework.Client, p string) error

// closedCalls are every recipe's blocking calls.
var closedCalls = []struct {
	name string
	call blockingCall
}{
	{"mutex.Acquire", func(t *testing.T, ctx context.Context, c *framework.Client, p string) error {
		m, err := mutex.New(c, p)
		require.NoError(t, err)
		return m.Acquire(ctx)
	}},
	{"rwlock.ReadLock.Acquire", func(t *testing.T, ctx context.Context, c *framework.Client, p string) error {
		l, err := rwlock.New(c, p)
		require.NoError(t, err)
		return l.ReadLock().Acquire(ctx)
	}},
	{"rwlock.WriteLock.Acquire", func(t *testing.T, ctx context.Context, c *framework.Client, p string) error {
		l, err := rwlock.New(c, p)
		require.NoError(t, err)
		return l.WriteLock().Acquire(ctx)
	}},
	{"semaphore.Mutex.Acquire", func(t *testing.T, ctx context.Context, c *framework.Client, p string) error {
		m, err := semaphore.NewMutex(c, p)
		require.NoError(t, err)
		return m.Acquire(ctx)
	}},
	{"semaphore.Acquire", func(t *testing.T, ctx context.Context, c *framework.Client, p string) error {
		s, err := semaphore.New(c, p, 1)
		require.NoError(t, err)
		_, err = s.Acquire(ctx, 1)
		return err
	}},
	{"multilock.Acquire", func(t *testing.T, ctx context.Context, c *framework.Client, p string) error {
		m, err := multilock.NewMutexes(c, []string{p, p + "-b"})
		require.NoError(t, err)
		return m.Acquire(ctx)
	}},
	{"election.Latch.Await", func(t *testing.T, ctx context.Context, c *framework.Client, p string) error {
		l, err := election.NewLatch(c, p)
		require.NoError(t, err)
		t.Cleanup(func() { _ = l.Close(context.Background()) })
		if err := l.Start(ctx); err != nil {
			return err
		}
		return l.Await(ctx)
	}},
	{"election.Selector.Start", func(t *testing.T, ctx context.Context, c *framework.Client, p string) error {
		s, err := election.NewSelector(c, p, func(ctx context.Context, _ election.Term) error { <-ctx.Done(); return nil })
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close(context.Background()) })
		return s.Start(ctx)
	}},
	{"cache.Start", func(t *testing.T, ctx context.Context, c *framework.Client, p string) error {
		ca, err := cache.New(c, p, cache.Depth(1))
		require.NoError(t, err)
		t.Cleanup(func() { _ = ca.Close(context.Background()) })
		return ca.Start(ctx)
	}},
	{"nodes.Start", func(t *testing.T, ctx context.Context, c *framework.Client, p string) error {
		n, err := nodes.New(c, p+"/node", nil, nodes.Ephemeral())
		require.NoError(t, err)
		t.Cleanup(func() { _ = n.Close(context.Background()) })
		return n.Start(ctx)
	}},
	{"group.Start", func(t *testing.T, ctx context.Context, c *framework.Client, p string) error {
		m, err := group.New(c, p, "m", nil)
		require.NoError(t, err)
		t.Cleanup(func() { _ = m.Close(context.Background()) })
		return m.Start(ctx)
	}},
	{"shared.Value.Start", func(t *testing.T, ctx context.Context, c *framework.Client, p string) error {
		v, err := shared.NewValue(c, p, nil)
		require.NoError(t, err)
		t.Cleanup(func() { _ = v.Close(context.Background()) })
		return v.Start(ctx)
	}},
	{"shared.Count.Start", func(t *testing.T, ctx context.Context, c *framework.Client, p string) error {
		n, err := shared.NewCount(c, p, 0)
		require.NoError(t, err)
		t.Cleanup(func() { _ = n.Close(context.Background()) })
		return n.Start(ctx)
	}},
	{"counter.Add", func(t *testing.T, ctx context.Context, c *framework.Client, p string) error {
		n, err := counter.New(c, p)
		require.NoError(t, err)
		_, err = n.Add(ctx, 1)
		return err
	}},
	{"mutex.TryAcquire", func(t *testing.T, ctx context.Context, c *framework.Client, p string) error {
		m, err := mutex.New(c, p)
		require.NoError(t, err)
		_, err = m.TryAcquire(ctx)
		return err
	}},
	{"counter.Get", func(t *testing.T, ctx context.Context, c *framework.Client, p string) error {
		n, err := counter.New(c, p)
		require.NoError(t, err)
		_, err = n.Get(ctx)
		return err
	}},
	{"counter.CompareAndSet", func(t *testing.T, ctx context.Context, c *framework.Client, p string) error {
		n, err := counter.New(c, p)
		require.NoError(t, err)
		_, err = n.CompareAndSet(ctx, 0, 1)
		return err
	}},
	{"barrier.Set", func(t *testing.T, ctx context.Context, c *framework.Client, p string) error {
		b, err := barrier.New(c, p)
		require.NoError(t, err)
		return b.Set(ctx)
	}},
	{"barrier.Wait", func(t *testing.T, ctx context.Context, c *framework.Client, p string) error {
		b, err := barrier.New(c, p)
		require.NoError(t, err)
		return b.Wait(ctx)
	}},
	{"barrier.Double.Enter", func(t *testing.T, ctx context.Context, c *framework.Client, p string) error {
		d, err := barrier.NewDouble(c, p, 2)
		require.NoError(t, err)
		return d.Enter(ctx)
	}},
	{"discovery.Register", func(t *testing.T, ctx context.Context, c *framework.Client, p string) error {
		d, err := discovery.New(c, p)
		require.NoError(t, err)
		r, err := d.Register(ctx, discovery.Instance{Name: "api", ID: "one", Address: "10.0.0.1", Port: 80})
		if err == nil {
			t.Cleanup(func() { _ = r.Close(context.Background()) })
		}
		return err
	}},
	{"discovery.Provider.Start", func(t *testing.T, ctx context.Context, c *framework.Client, p string) error {
		d, err := discovery.New(c, p)
		require.NoError(t, err)
		pr, err := d.NewProvider("api")
		require.NoError(t, err)
		t.Cleanup(func() { _ = pr.Close(context.Background()) })
		return pr.Start(ctx)
	}},
	{"partition.Start", func(t *testing.T, ctx context.Context, c *framework.Client, p string) error {
		pa, err := partition.New(c, p, func(ctx context.Context, _ partition.Item) error { <-ctx.Done(); return nil },
			partition.Items("a"), partition.WithID("m"))
		require.NoError(t, err)
		t.Cleanup(func() { _ = pa.Close(context.Background()) })
		return pa.Start(ctx)
	}},
}

// endsClosed runs call and requires that it returns an error wrapping
// framework.ErrClosed once close has run, well before wait: a call that hangs fails
// rather than blocks, and one that ends with the deadline's error fails too.
func endsClosed(t *testing.T, call func(ctx context.Context) error, close func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	result := make(chan error, 1)
	go func() { result <- call(ctx) }()
	close()
	select {
	case err := <-result:
		require.ErrorIs(t, err, framework.ErrClosed)
	case <-time.After(wait + 5*time.Second):
		t.Fatal("the call did not return")
	}
}

// TestClosedClientBefore: every blocking call of every recipe whose client was
// closed before the call returns an error wrapping framework.ErrClosed, promptly.
func TestClosedClientBefore(t *testing.T) {
	srv := zktest.NewServer(t)
	for i, tc := range closedCalls {
		t.Run(tc.name, func(t *testing.T) {
			c := zkrtest.Closed(t, []string{srv.Addr()})
			p := fmt.Sprintf("/closed/before/%d", i)
			endsClosed(t, func(ctx context.Context) error { return tc.call(t, ctx, c, p) }, func() {})
		})
	}
}

// TestClosedClientWaiting: a call waiting for a server the client never reached
// (the whole table), or for another holder or member (locks, latch, barriers)
// returns an error wrapping framework.ErrClosed when its client is closed.
func TestClosedClientWaiting(t *testing.T) {
	srv := zktest.NewServer(t)
	for i, tc := range closedCalls {
		t.Run(tc.name+"/no-server", func(t *testing.T) {
			// A cut proxy closes every connection at once: the client never connects.
			proxy := zktest.NewProxy(t, srv.Addr())
			proxy.Cut()
			c, err := framework.New([]string{proxy.Addr()})
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Close() })
			p := fmt.Sprintf("/closed/noserver/%d", i)
			endsClosed(t, func(ctx context.Context) error { return tc.call(t, ctx, c, p) }, func() { _ = c.Close() })
		})
	}
}

// queuedCalls wait behind another client's hold or for other members: the waiter's
// node under the path shows it is waiting when its client is closed.
var queuedCalls = []struct {
	name  string
	hold  func(t *testing.T, c *framework.Client, p string) // makes the waiter wait
	call  blockingCall
	under string // where the waiter's node appears, below p
}{
	{name: "mutex.Acquire", hold: holdMutex, call: closedCall("mutex.Acquire")},
	{name: "rwlock.ReadLock.Acquire", call: closedCall("rwlock.ReadLock.Acquire"), hold: func(t *testing.T, c *framework.Client, p string) {
		l, err := rwlock.New(c, p)
		require.NoError(t, err)
		require.NoError(t, l.WriteLock().Acquire(testCtx(t)))
	}},
	{name: "semaphore.Mutex.Acquire", call: closedCall("semaphore.Mutex.Acquire"), under: "/leases", hold: func(t *testing.T, c *framework.Client, p string) {
		m, err := semaphore.NewMutex(c, p)
		require.NoError(t, err)
		require.NoError(t, m.Acquire(testCtx(t)))
	}},
	{name: "semaphore.Acquire", call: closedCall("semaphore.Acquire"), under: "/leases", hold: func(t *testing.T, c *framework.Client, p string) {
		s, err := semaphore.New(c, p, 1)
		require.NoError(t, err)
		_, err = s.Acquire(testCtx(t), 1)
		require.NoError(t, err)
	}},
	{name: "multilock.Acquire", hold: holdMutex, call: closedCall("multilock.Acquire")},
	{name: "election.Latch.Await", call: closedCall("election.Latch.Await"), hold: func(t *testing.T, c *framework.Client, p string) {
		l, err := election.NewLatch(c, p)
		require.NoError(t, err)
		t.Cleanup(func() { _ = l.Close(context.Background()) })
		require.NoError(t, l.Start(testCtx(t)))
		require.NoError(t, l.Await(testCtx(t)))
	}},
	{name: "barrier.Double.Enter", call: closedCall("barrier.Double.Enter"), hold: func(*testing.T, *framework.Client, string) {}},
}

func holdMutex(t *testing.T, c *framework.Client, p string) {
	m, err := mutex.New(c, p)
	require.NoError(t, err)
	require.NoError(t, m.Acquire(testCtx(t)))
}

func closedCall(name string) blockingCall {
	for _, tc := range closedCalls {
		if tc.name == name {
			return tc.call
		}
	}
	panic("no call " + name)
}

// TestClosedClientQueued: a call queued behind another client's hold, or waiting for
// other members, returns an error wrapping framework.ErrClosed when its client is
// closed, and leaves no node behind.
func TestClosedClientQueued(t *testing.T) {
	srv := zktest.NewServer(t)
	for i, tc := range queuedCalls {
		t.Run(tc.name, func(t *testing.T) {
			holder := newClient(t, []string{srv.Addr()})
			c := newClient(t, []string{srv.Addr()})
			p := fmt.Sprintf("/closed/queued/%d", i)
			tc.hold(t, holder, p)
			before := len(zkrtest.Children(t, holder, p+tc.under))
			endsClosed(t, func(ctx context.Context) error { return tc.call(t, ctx, c, p) }, func() {
				require.Eventually(t, func() bool {
					names, err := zkrtest.List(holder, p+tc.under)
					return err == nil && len(names) > before
				}, wait, 10*time.Millisecond, "the waiter never queued")
				_ = c.Close()
			})
			require.Eventually(t, func() bool {
				names, err := zkrtest.List(holder, p+tc.under)
				return err == nil && len(names) == before
			}, wait, 10*time.Millisecond, "the waiter's node stayed")
		})
	}
}

// TestClosedBarrierWait: a Wait on a set barrier returns an error wrapping
// framework.ErrClosed when its client is closed.
func TestClosedBarrierWait(t *testing.T) {
	srv := zktest.NewServer(t)
	setter := newClient(t, []string{srv.Addr()})
	b, err := barrier.New(setter, "/closed/barrier")
	require.NoError(t, err)
	require.NoError(t, b.Set(testCtx(t)))
	c := newClient(t, []string{srv.Addr()})
	// The Wait cannot be seen waiting from outside: the client is closed once it runs,
	// before or after the Wait's read, and either way it must end with ErrClosed.
	endsClosed(t, func(ctx context.Context) error { return closedCall("barrier.Wait")(t, ctx, c, "/closed/barrier") },
		func() { _ = c.Close() })
}

// stops collects the stop notices a follower's listener heard.
type stops struct {
	mu    sync.Mutex
	errs  []error
	heard chan struct{} // closed at the first
}

func newStops() *stops { return &stops{heard: make(chan struct{})} }

func (s *stops) hear(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs = append(s.errs, err)
	if len(s.errs) == 1 {
		close(s.heard)
	}
}

func (s *stops) all() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.errs)
}

// followers are the recipes that follow state in the background: start starts one
// with c at p, its stop notices going to s, and returns its Close.
var followers = []struct {
	name  string
	start func(t *testing.T, c *framework.Client, p string, s *stops) (close func())
}{
	{"cache", func(t *testing.T, c *framework.Client, p string, s *stops) func() {
		ca, err := cache.New(c, p)
		require.NoError(t, err)
		ca.Listen(func(ev cache.Event) {
			if ev.Type == cache.Stopped {
				s.hear(ev.Err)
			}
		})
		require.NoError(t, ca.Start(testCtx(t)))
		return func() { _ = ca.Close(context.Background()) }
	}},
	{"nodes", func(t *testing.T, c *framework.Client, p string, s *stops) func() {
		n, err := nodes.New(c, p, nil)
		require.NoError(t, err)
		n.Listen(func(ev nodes.Event) {
			if ev.Err != nil {
				s.hear(ev.Err)
			}
		})
		require.NoError(t, n.Start(testCtx(t)))
		return func() { _ = n.Close(context.Background()) }
	}},
	{"shared.Value", func(t *testing.T, c *framework.Client, p string, s *stops) func() {
		v, err := shared.NewValue(c, p, []byte("seed"))
		require.NoError(t, err)
		v.Listen(func(v shared.Versioned[[]byte]) {
			if v.Err != nil {
				s.hear(v.Err)
			}
		})
		require.NoError(t, v.Start(testCtx(t)))
		return func() { _ = v.Close(context.Background()) }
	}},
	{"shared.Count", func(t *testing.T, c *framework.Client, p string, s *stops) func() {
		n, err := shared.NewCount(c, p, 7)
		require.NoError(t, err)
		n.Listen(func(v shared.Versioned[int32]) {
			if v.Err != nil {
				require.Equal(t, int32(7), v.Value, "the last value known")
				s.hear(v.Err)
			}
		})
		require.NoError(t, n.Start(testCtx(t)))
		return func() { _ = n.Close(context.Background()) }
	}},
	{"discovery.Provider", func(t *testing.T, c *framework.Client, p string, s *stops) func() {
		d, err := discovery.New(c, p)
		require.NoError(t, err)
		pr, err := d.NewProvider("api")
		require.NoError(t, err)
		pr.Listen(func(ev discovery.Event) {
			if ev.Type == discovery.Stopped {
				s.hear(ev.Err)
			}
		})
		require.NoError(t, pr.Start(testCtx(t)))
		return func() { _ = pr.Close(context.Background()) }
	}},
	{"election.Latch", func(t *testing.T, c *framework.Client, p string, s *stops) func() {
		// A latch's listeners hear a bool: the end of leadership, with no cause; the
		// client's Context gives it.
		l, err := election.NewLatch(c, p)
		require.NoError(t, err)
		l.Listen(func(leads bool) {
			if !leads {
				s.hear(context.Cause(c.ForRecipes().Context()))
			}
		})
		require.NoError(t, l.Start(testCtx(t)))
		require.NoError(t, l.Await(testCtx(t)))
		return func() { _ = l.Close(context.Background()) }
	}},
	{"group", func(t *testing.T, c *framework.Client, p string, s *stops) func() {
		m, err := group.New(c, p, "m", nil)
		require.NoError(t, err)
		require.NoError(t, m.Start(testCtx(t)))
		go func() { <-m.Done(); s.hear(m.Err()) }()
		return func() { _ = m.Close(context.Background()) }
	}},
	{"partition", func(t *testing.T, c *framework.Client, p string, s *stops) func() {
		causes := make(chan error, 1)
		pa, err := partition.New(c, p, func(ctx context.Context, _ partition.Item) error {
			<-ctx.Done()
			if c.ForRecipes().Context().Err() == nil {
				// Ended before the close (a busy machine's connection blip: the lock
				// may be lost); the work runs again, and its end at the close counts.
				return nil
			}
			select {
			case causes <- context.Cause(ctx):
			default:
			}
			return nil
		}, partition.Items("a"), partition.WithID("m"))
		require.NoError(t, err)
		require.NoError(t, pa.Start(testCtx(t)))
		require.Eventually(t, func() bool { return len(pa.Owned()) == 1 }, wait, 10*time.Millisecond)
		go func() {
			<-pa.Done()
			s.hear(pa.Err())
			s.hear(<-causes) // the work's ctx says why too
		}()
		return func() { _ = pa.Close(context.Background()) }
	}},
}

// TestClosedClientStopsFollowers: a running follower of state tells that it stopped
// because its client closed, once, with an error wrapping framework.ErrClosed.
func TestClosedClientStopsFollowers(t *testing.T) {
	srv := zktest.NewServer(t)
	for i, tc := range followers {
		t.Run(tc.name, func(t *testing.T) {
			c, err := framework.New([]string{srv.Addr()})
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Close() })
			s := newStops()
			closeFollower := tc.start(t, c, fmt.Sprintf("/closed/followers/%d", i), s)
			require.NoError(t, c.Close())
			select {
			case <-s.heard:
			case <-time.After(wait):
				t.Fatal("no stop notice")
			}
			closeFollower() // no listener is called after it returns
			want := 1
			if tc.name == "partition" {
				require.Eventually(t, func() bool { return len(s.all()) == 2 }, wait, 10*time.Millisecond)
				want = 2
			}
			errs := s.all()
			require.Len(t, errs, want, "heard once")
			for _, err := range errs {
				require.ErrorIs(t, err, framework.ErrClosed)
			}
		})
	}
}
