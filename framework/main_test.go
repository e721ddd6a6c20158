package framework

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zkrecipes/zkrecipes/zktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(sharedRun{m}) }

// shared is the one server that the package's tests share (sharedServer), started at
// the first call and stopped once every test has run, before goleak looks.
var shared struct {
	mu  sync.Mutex
	srv *zktest.Server
	err error
}

// sharedServer is a standalone server with zktest's defaults shared by the tests of
// this package that only need a server to talk to, as zkrtest.Server is for the
// recipes' tests (which this package's tests cannot import: zkrtest imports the
// framework): a JVM started for each test was much of the package's time. It is the
// test's alone while it runs: a test that uses it must not call t.Parallel (the
// parallel tests only start once every other test is over, and start servers of their
// own), and it is empty again after the test: once the test's clients have closed
// (their cleanups run before this one's, registered after it), every node the test
// left is deleted, and a node that cannot be (an ACL that refuses it) fails the test.
//
// A test that stops or restarts the server, changes its options, reads its
// server-wide counters (mntr) or runs in parallel starts its own with zktest.NewServer.
func sharedServer(t *testing.T) *zktest.Server {
	t.Helper()
	shared.mu.Lock()
	if shared.srv == nil && shared.err == nil {
		shared.srv, shared.err = zktest.StartServer(context.Background())
	}
	srv, err := shared.srv, shared.err
	shared.mu.Unlock()
	if err != nil {
		t.Fatalf("the shared server: %v", err)
	}
	if err := wipe(srv.Addr()); err != nil {
		t.Fatalf("the shared server is not empty before the test: %v", err)
	}
	t.Cleanup(func() {
		if err := wipe(srv.Addr()); err != nil {
			t.Errorf("the shared server could not be emptied after the test (give the test a server of its own): %v", err)
		}
	})
	return srv
}

// wipe deletes every node on the server but /zookeeper's, with a client that logs
// nothing (a test may count what slog's default logger is told).
func wipe(addr string) error {
	c, err := New([]string{addr}, WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := c.WaitConnected(ctx); err != nil {
		return err
	}
	names, _, err := c.Children(ctx, "/")
	if err != nil {
		return err
	}
	for _, name := range names {
		if name == "zookeeper" {
			continue
		}
		if err := c.DeleteAll(ctx, "/"+name); err != nil && !errors.Is(err, ErrNoNode) {
			return fmt.Errorf("deleting /%s: %w", name, err)
		}
	}
	return nil
}

// sharedRun runs the tests, then stops the server they shared.
type sharedRun struct{ m *testing.M }

func (r sharedRun) Run() int {
	code := r.m.Run()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.srv != nil {
		if err := shared.srv.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "framework: closing the shared server:", err)
			if code == 0 {
				code = 1
			}
		}
		shared.srv = nil
	}
	return code
}

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
