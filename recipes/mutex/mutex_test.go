package mutex

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
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

func TestMutualExclusion(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	setup := newClient(t, []string{srv.Addr()})
	_, err := setup.Create(ctx, "/counter", []byte("0"))
	require.NoError(t, err)

	const clients, cycles = 10, 50
	var inside atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := range clients {
		c := newClient(t, []string{srv.Addr()})
		m := newMutex(t, c, "/locks/counter", WithID(fmt.Sprint("client-", i)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range cycles {
				if err := m.Acquire(ctx); err != nil {
					errs <- err
					return
				}
				if inside.Add(1) != 1 {
					errs <- fmt.Errorf("two holders at once")
				}
				// A read-modify-write that only mutual exclusion keeps exact.
				data, stat, err := c.Get(ctx, "/counter")
				if err == nil {
					n, _ := strconv.Atoi(string(data))
					_, err = c.Set(ctx, "/counter", []byte(strconv.Itoa(n+1)), stat.Version)
				}
				inside.Add(-1)
				if err != nil {
					errs <- err
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
		require.NoError(t, err)
	}
	data, _, err := setup.Get(ctx, "/counter")
	require.NoError(t, err)
	require.Equal(t, strconv.Itoa(clients*cycles), string(data))
	require.Empty(t, children(t, setup, "/locks/counter"), "no node left")
}

func TestReentrancy(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	m := newMutex(t, c, "/locks/r")
	for range 3 {
		require.NoError(t, m.Acquire(ctx))
	}
	node := m.Node()
	require.Len(t, children(t, c, "/locks/r"), 1, "one node however deep")

	other := newMutex(t, c, "/locks/r")
	ok, err := other.TryAcquire(ctx)
	require.NoError(t, err)
	require.False(t, ok, "a second value on the same client is another participant")
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, other.Acquire(short), context.DeadlineExceeded)

	for i := range 3 {
		require.True(t, m.IsAcquired(), "still held before release %d", i+1)
		require.Equal(t, node, m.Node())
		require.NoError(t, m.Release(ctx))
	}
	require.False(t, m.IsAcquired())
	require.ErrorIs(t, m.Release(ctx), ErrNotHeld)
	require.Empty(t, children(t, c, "/locks/r"))
}

func TestWaitersAcquireInQueueOrder(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	holder := newMutex(t, c, "/locks/fifo")
	require.NoError(t, holder.Acquire(ctx))

	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	for i := range 5 {
		m := newMutex(t, newClient(t, []string{srv.Addr()}), "/locks/fifo")
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := m.Acquire(ctx); err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			_ = m.Release(ctx)
		}()
		// Queue the next one only once this one's node is in line.
		require.Eventually(t, func() bool { return len(children(t, c, "/locks/fifo")) == i+2 }, wait, 5*time.Millisecond)
	}
	require.NoError(t, holder.Release(ctx))
	wg.Wait()
	require.Equal(t, []int{0, 1, 2, 3, 4}, order)
}

// watches parses the server's wchs answer: how many paths are watched, how many watches.
func watches(t testing.TB, srv *zktest.Server) (paths, total int) {
	t.Helper()
	return watchesBy(t, testCtx(t), srv)
}

// watchesBy is watches, asking within ctx.
func watchesBy(t testing.TB, ctx context.Context, srv *zktest.Server) (paths, total int) {
	t.Helper()
	out, err := srv.FourLetter(ctx, "wchs")
	require.NoError(t, err)
	m := regexp.MustCompile(`watching (\d+) paths\s+Total watches:(\d+)`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	paths, _ = strconv.Atoi(m[1])
	total, _ = strconv.Atoi(m[2])
	return paths, total
}

func TestNoHerd(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	holder := newMutex(t, c, "/locks/herd")
	require.NoError(t, holder.Acquire(ctx))

	const waiters = 20
	acquired := make(chan int, waiters)
	hold, stopHolding := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i := range waiters {
		m := newMutex(t, newClient(t, []string{srv.Addr()}), "/locks/herd", WithID(strconv.Itoa(i)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			if m.Acquire(ctx) == nil {
				acquired <- i
				<-hold.Done()
				_ = m.Release(ctx)
			}
		}()
	}
	// Two watches per waiter, set in one request: on its predecessor, and on its own
	// node, which it must watch once it holds; and the holder's on its own node. So
	// every node is watched by its owner and by the one waiter behind it, no more.
	require.Eventually(t, func() bool {
		_, total := watches(t, srv)
		return total == 2*waiters+1
	}, wait, 10*time.Millisecond)
	paths, total := watches(t, srv)
	require.Equal(t, waiters+1, paths, "every node is watched")
	require.Equal(t, 2*waiters+1, total, "by its owner, and by the waiter behind it")

	queue, err := holder.Participants(ctx) // the waiters queued in whatever order they ran
	require.NoError(t, err)
	require.Len(t, queue, waiters+1)
	require.NoError(t, holder.Release(ctx))
	first := <-acquired
	require.Equal(t, queue[1].ID, strconv.Itoa(first), "the first in line")
	require.Eventually(t, func() bool {
		_, total := watches(t, srv)
		return total == 2*waiters-1
	}, wait, 10*time.Millisecond, "only the first waiter's watch fired (and the old holder's): the new holder's on its node was set already")
	select {
	case i := <-acquired:
		t.Fatalf("waiter %d acquired too: a release woke more than one", i)
	default:
	}
	stopHolding()
	wg.Wait()
}

func TestTimeoutCancelAndFailedTryLeaveNoNode(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	holder := newMutex(t, c, "/locks/t")
	require.NoError(t, holder.Acquire(ctx))
	other := newMutex(t, newClient(t, []string{srv.Addr()}), "/locks/t")

	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, other.Acquire(short), context.DeadlineExceeded)
	// On a slow machine the deadline can pass while the create is on its way: the
	// node it made is then deleted in the background, as after a cancel.
	require.Eventually(t, func() bool { return len(children(t, c, "/locks/t")) == 1 }, wait, 5*time.Millisecond, "after a timeout")

	cancelled, cancelNow := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- other.Acquire(cancelled) }()
	require.Eventually(t, func() bool { return len(children(t, c, "/locks/t")) == 2 }, wait, 5*time.Millisecond)
	cancelNow()
	require.ErrorIs(t, <-done, context.Canceled)
	require.Eventually(t, func() bool { return len(children(t, c, "/locks/t")) == 1 }, wait, 5*time.Millisecond, "after a cancel")

	ok, err := other.TryAcquire(ctx)
	require.NoError(t, err)
	require.False(t, ok)
	require.Len(t, children(t, c, "/locks/t"), 1, "after a failed TryAcquire")
	require.Equal(t, base(holder.Node()), children(t, c, "/locks/t")[0])
}

func base(node string) string { return node[strings.LastIndexByte(node, '/')+1:] }

func TestHolderSessionExpiry(t *testing.T) {
	srv := zkrtest.Server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	ctx := testCtx(t)
	victimClient := newClient(t, []string{proxy.Addr()}, framework.WithSessionTimeout(2*time.Second))
	victim := newMutex(t, victimClient, "/locks/e")
	require.NoError(t, victim.Acquire(ctx))
	oldToken := victim.FencingToken()

	c := newClient(t, []string{srv.Addr()})
	next := newMutex(t, c, "/locks/e")
	acquired := make(chan error, 1)
	go func() { acquired <- next.Acquire(ctx) }()

	require.NoError(t, proxy.ExpireSession(ctx, 2*time.Second))
	select {
	case <-victim.Lost():
	case <-time.After(wait):
		t.Fatal("Lost did not close")
	}
	require.False(t, victim.IsAcquired())
	require.NoError(t, <-acquired, "another client acquires once the session is gone")
	require.Greater(t, next.FencingToken(), oldToken, "fencing tokens grow")

	require.ErrorIs(t, victim.Release(ctx), ErrLost)
	require.True(t, next.IsAcquired())
	require.Equal(t, []string{base(next.Node())}, children(t, c, "/locks/e"), "the new holder's node is untouched")
	require.NoError(t, next.Release(ctx))
	require.NoError(t, victim.Acquire(ctx), "the value is ready to acquire again")
	require.NoError(t, victim.Release(ctx))
}

// Context of a mutex that is not held has ended when it returns.
func TestContextWithoutAHoldHasEnded(t *testing.T) {
	srv := zkrtest.Server(t)
	m := newMutex(t, newClient(t, []string{srv.Addr()}), "/locks/ended")
	for range 1000 {
		ctx, cancel := m.Context(context.Background())
		require.Error(t, ctx.Err())
		require.ErrorIs(t, context.Cause(ctx), ErrNotHeld)
		cancel()
	}
}
