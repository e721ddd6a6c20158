package framework

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zkrecipes/zkrecipes/zktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// wait is how long a test waits for a condition before it fails; far above what any
// condition needs, so that a busy machine does not make a test flaky.
const wait = 30 * time.Second

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

// newClient connects to servers, waits for the session, and closes at the end.
func newClient(t *testing.T, servers []string, opts ...Option) *Client {
	t.Helper()
	c, err := New(servers, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	// Before its first session a client's wait ends after one connection timeout,
	// which some tests make short (100 ms) for what they test later; on a busy
	// machine the first session can take longer (CI runs saw it), so wait for it
	// as long as the test waits for anything.
	ctx := testCtx(t)
	for err = c.WaitConnected(ctx); err != nil && ctx.Err() == nil; err = c.WaitConnected(ctx) {
	}
	require.NoError(t, err)
	return c
}

// stateLog records what a listener hears.
type stateLog struct {
	mu     sync.Mutex
	states []ConnectionState
	stop   func()
}

func listen(c *Client) *stateLog {
	l := &stateLog{}
	l.stop = c.Listen(func(s ConnectionState) {
		l.mu.Lock()
		l.states = append(l.states, s)
		l.mu.Unlock()
	})
	return l
}

func (l *stateLog) get() []ConnectionState {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]ConnectionState(nil), l.states...)
}

// waitFor waits until the log holds exactly want.
func (l *stateLog) waitFor(t *testing.T, want ...ConnectionState) {
	t.Helper()
	require.Eventually(t, func() bool { return len(l.get()) >= len(want) }, wait, 10*time.Millisecond,
		"waiting for %v, heard %v", want, l.get())
	require.Equal(t, want, l.get())
}

// silentServer accepts connections and never answers, as a ZooKeeper caught in its
// start-up can; it returns its address and counts the connections it accepted.
func silentServer(t *testing.T) (string, *atomic.Int32) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	accepted := make(chan net.Conn, 100)
	var count atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- conn
			count.Add(1)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		close(accepted)
		for conn := range accepted {
			conn.Close()
		}
	})
	return l.Addr().String(), &count
}

// elected waits for the members still running to have a leader, so that the
// client's reconnection is timed from a quorum that serves. The election is the
// ensemble's own time: on a busy machine it can take many rounds (a follower that
// misses syncLimit, one second here, starts another), and CI once saw the two
// members left take longer than wait.
func elected(t *testing.T, e *zktest.Ensemble) {
	t.Helper()
	start := time.Now()
	require.Eventually(t, func() bool { return e.Leader() >= 0 }, 4*wait, 50*time.Millisecond,
		"no leader among the members still running")
	t.Logf("member %d leads, after %v", e.Leader(), time.Since(start))
}
