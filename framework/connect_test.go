package framework

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/zktest"
)

// A wrong address must not keep an operation waiting for minutes: before the client
// has ever reached a server, the connection timeout ends the wait, however patient
// the retry policy, and the error says why the attempts failed and how long it took.
func TestAWrongAddressFailsWithinOneConnectionTimeout(t *testing.T) {
	t.Parallel()
	addr := closedPort(t)
	logs := &records{}
	c, err := New([]string{addr}, WithConnectionTimeout(time.Second),
		WithRetryPolicy(RetryForever(10*time.Millisecond)), WithLogger(slog.New(logs)))
	require.NoError(t, err)
	defer c.Close()
	logs.waitForWarning(t) // an attempt has failed

	// The test's deadline is far above one connection timeout: only the client's own
	// giving up makes the Get end without it.
	_, _, err = c.Get(testCtx(t), "/")
	var ce *ConnectError
	require.ErrorAs(t, err, &ce)
	require.ErrorIs(t, err, zk.ErrNoServer, "the connection timeout ended the wait: %v", err)
	require.NotErrorIs(t, err, context.DeadlineExceeded, "not the test's deadline")
	require.ErrorIs(t, err, syscall.ECONNREFUSED, "the last attempt's cause is in the chain")
	require.ErrorContains(t, err, "dial tcp "+addr+": connect: connection refused")
	require.GreaterOrEqual(t, ce.Waited, time.Second)
	require.ErrorContains(t, err, "framework: /: no connection after "+ce.Waited.Round(time.Millisecond).String())
}

// However a wait for a connection ends, its error carries the last attempt's cause
// and the time waited.
func TestAWaitForAConnectionSaysWhyAndHowLong(t *testing.T) {
	t.Parallel()
	addr := closedPort(t)
	client := func(t *testing.T, opts ...Option) *Client {
		logs := &records{}
		c, err := New([]string{addr}, append(opts, WithLogger(slog.New(logs)))...)
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		logs.waitForWarning(t)
		return c
	}
	check := func(t *testing.T, err error, ended error) *ConnectError {
		t.Helper()
		var ce *ConnectError
		require.ErrorAs(t, err, &ce)
		require.ErrorIs(t, err, ended)
		require.ErrorIs(t, err, syscall.ECONNREFUSED, "the last attempt's cause is in the chain")
		require.ErrorContains(t, err, "no connection after "+ce.Waited.Round(time.Millisecond).String()+": ")
		require.ErrorContains(t, err, "; last connection attempt: dial tcp "+addr+": connect: connection refused")
		return ce
	}

	t.Run("deadline", func(t *testing.T) {
		c := client(t, WithConnectionTimeout(time.Hour))
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, _, err := c.Get(ctx, "/")
		check(t, err, context.DeadlineExceeded)
		require.False(t, IsRetryable(err), "the caller asked to stop")
	})
	t.Run("cancellation", func(t *testing.T) {
		c := client(t, WithConnectionTimeout(time.Hour))
		ctx, cancel := context.WithCancel(context.Background())
		res := make(chan error, 1)
		go func() {
			_, err := c.Create(ctx, "/x", nil)
			res <- err
		}()
		cancel()
		check(t, <-res, context.Canceled)
	})
	t.Run("retries spent", func(t *testing.T) {
		// Asked for, retries wait a connection timeout each, and the error counts
		// every wait, not only the last.
		c := client(t, WithConnectionTimeout(200*time.Millisecond),
			WithRetryPolicy(RetryNTimes(2, 10*time.Millisecond)), WithRetryBeforeFirstConnection())
		_, _, err := c.Exists(testCtx(t), "/")
		ce := check(t, err, zk.ErrNoServer)
		require.GreaterOrEqual(t, ce.Waited, 3*200*time.Millisecond)
	})
	t.Run("WaitConnected", func(t *testing.T) {
		c := client(t)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		err := c.WaitConnected(ctx)
		ce := check(t, err, context.DeadlineExceeded)
		require.ErrorContains(t, err, "framework: no connection after ")
		require.GreaterOrEqual(t, ce.Waited, 50*time.Millisecond, "the wait is the whole of WaitConnected's")
	})
}

// A client that has had a session keeps Curator's semantics when its server goes:
// each retry waits up to a connection timeout, for a server that may come back.
func TestASuspendedClientRetriesItsWaitForAConnection(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t, longSessions)
	c := newClient(t, []string{srv.Addr()}, WithSessionTimeout(longSession),
		WithConnectionTimeout(300*time.Millisecond), WithRetryPolicy(RetryNTimes(2, 10*time.Millisecond)))
	log := listen(c)
	srv.Stop()
	log.waitFor(t, Suspended)
	_, _, err := c.Get(testCtx(t), "/")
	var ce *ConnectError
	require.ErrorAs(t, err, &ce)
	require.ErrorIs(t, err, zk.ErrNoServer)
	require.GreaterOrEqual(t, ce.Waited, 3*300*time.Millisecond, "three waits: the first and two retries")
}

// The first failed attempt of a run is logged at Warn, once however many follow and
// however they differ (here two servers, two addresses), and again only after a
// server has answered; with no logger given, to slog's default, and nothing else is.
func TestAFailedConnectionIsLoggedOncePerRun(t *testing.T) {
	servers := []string{closedPort(t), closedPort(t)}
	// run starts a client that cannot connect and waits until it has failed on every
	// server twice.
	run := func(t *testing.T, opts ...Option) {
		var dials atomic.Int32
		c, err := New(servers, append(opts, WithDialer(func(network, addr string, timeout time.Duration) (net.Conn, error) {
			defer dials.Add(1)
			return net.DialTimeout(network, addr, timeout)
		}))...)
		require.NoError(t, err)
		defer c.Close()
		require.Eventually(t, func() bool { return dials.Load() >= 2*int32(len(servers)) }, wait, 10*time.Millisecond)
	}

	t.Run("the client's logger", func(t *testing.T) {
		t.Parallel()
		logs := &records{}
		run(t, WithLogger(slog.New(logs)))
		require.Len(t, logs.warnings(), 1, "%v", logs.warnings())
		require.Contains(t, logs.warnings()[0], "connection refused")
	})
	// Not in parallel: it sets slog's default logger, which every client without a
	// logger of its own writes to. (The parallel subtests start once it is over.)
	t.Run("slog's default", func(t *testing.T) {
		logs := &records{}
		prev := slog.Default()
		slog.SetDefault(slog.New(logs))
		defer slog.SetDefault(prev)
		run(t)
		require.Len(t, logs.all(), 1, "one warning, and nothing else: %v", logs.all())
		require.Len(t, logs.warnings(), 1)
	})
	t.Run("again after a server answered", func(t *testing.T) {
		t.Parallel()
		srv := zktest.NewServer(t, longSessions)
		logs := &records{}
		c := newClient(t, []string{srv.Addr()}, WithSessionTimeout(longSession), WithLogger(slog.New(logs)))
		log := listen(c)
		srv.Stop()
		logs.waitForWarning(t)
		require.NoError(t, srv.Start())
		log.waitFor(t, Suspended, Reconnected)
		require.Len(t, logs.warnings(), 1)
		srv.Stop()
		require.Eventually(t, func() bool { return len(logs.warnings()) == 2 }, wait, 10*time.Millisecond,
			"a new run of failures is told: %v", logs.warnings())
	})
}

// closedPort is a loopback address where nothing listens: a port reserved, then closed.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// records is a slog handler that keeps every record it is given.
type records struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *records) WithGroup(string) slog.Handler            { return r }

func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec.Clone())
	return nil
}

// all is every record, as "LEVEL message key=value ...".
func (r *records) all() []string { return r.atLeast(slog.LevelDebug - 10) }

func (r *records) warnings() []string { return r.atLeast(slog.LevelWarn) }

func (r *records) atLeast(l slog.Level) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, rec := range r.recs {
		if rec.Level < l {
			continue
		}
		s := rec.Level.String() + " " + rec.Message
		rec.Attrs(func(a slog.Attr) bool {
			s += " " + a.String()
			return true
		})
		out = append(out, s)
	}
	return out
}

func (r *records) waitForWarning(t *testing.T) {
	t.Helper()
	require.Eventually(t, func() bool { return len(r.warnings()) > 0 }, wait, 10*time.Millisecond)
}

// Before the client's first session, WaitConnected ends as an operation does: with a
// wrong address and a context that never ends, after one connection timeout, with
// the *ConnectError a Get gives. The client's own connection timeout must be what
// ends it; the test only bounds how long it looks.
func TestWaitConnectedBeforeAFirstSessionEndsWithinOneConnectionTimeout(t *testing.T) {
	t.Parallel()
	t.Run("never connected", func(t *testing.T) {
		t.Parallel()
		addr := closedPort(t)
		logs := &records{}
		c, err := New([]string{addr}, WithConnectionTimeout(5*time.Second), WithLogger(slog.New(logs)))
		require.NoError(t, err)
		defer c.Close()
		logs.waitForWarning(t) // an attempt has failed: its cause is known

		got := make(chan error, 1) // Get's, for the same wait
		go func() {
			_, _, err := c.Get(context.Background(), "/")
			got <- err
		}()
		err = returns(t, func() error { return c.WaitConnected(context.Background()) })
		var ce *ConnectError
		require.ErrorAs(t, err, &ce)
		require.ErrorIs(t, err, zk.ErrNoServer, "the connection timeout ended the wait: %v", err)
		require.ErrorIs(t, err, syscall.ECONNREFUSED, "the last attempt's cause is in the chain")
		require.GreaterOrEqual(t, ce.Waited, 5*time.Second)
		require.ErrorContains(t, err, "framework: no connection after "+ce.Waited.Round(time.Millisecond).String()+
			": connection timeout 5s: "+zk.ErrNoServer.Error()+"; last connection attempt: dial tcp "+addr)

		// Get's error is the same but for the path it names.
		err = returns(t, func() error { return <-got })
		var gce *ConnectError
		require.ErrorAs(t, err, &gce)
		require.ErrorIs(t, err, zk.ErrNoServer)
		require.Equal(t, ce.Err.Error(), gce.Err.Error())
		require.Equal(t, ce.Last.Error(), gce.Last.Error())
	})
	t.Run("WithRetryBeforeFirstConnection waits as long as ctx allows", func(t *testing.T) {
		t.Parallel()
		c, err := New([]string{closedPort(t)}, WithConnectionTimeout(200*time.Millisecond), WithRetryBeforeFirstConnection())
		require.NoError(t, err)
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second) // five connection timeouts
		defer cancel()
		err = c.WaitConnected(ctx)
		var ce *ConnectError
		require.ErrorAs(t, err, &ce)
		require.ErrorIs(t, err, context.DeadlineExceeded, "only ctx ended the wait")
		require.NotErrorIs(t, err, zk.ErrNoServer)
	})
	t.Run("after a session, as long as ctx allows", func(t *testing.T) {
		t.Parallel()
		// A recipe's loop that waits for its server through an outage.
		srv := zktest.NewServer(t, longSessions)
		// The first session may take more than 200 ms on a busy machine (a CI run saw
		// it): before it, the client waits as long as newClient's ctx allows.
		c := newClient(t, []string{srv.Addr()}, WithSessionTimeout(longSession), WithConnectionTimeout(200*time.Millisecond),
			WithRetryBeforeFirstConnection())
		log := listen(c)
		srv.Stop()
		log.waitFor(t, Suspended)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		err := c.WaitConnected(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded, "only ctx ended the wait")
		require.NotErrorIs(t, err, zk.ErrNoServer)
	})
}

// returns runs fn and returns its error, failing the test if fn has not returned
// after wait: a call that waits for a connection with a context that never ends must
// end by itself. (The test's deferred Close then releases it.)
func returns(t *testing.T, fn func() error) error {
	t.Helper()
	res := make(chan error, 1)
	go func() { res <- fn() }()
	select {
	case err := <-res:
		return err
	case <-time.After(wait):
		require.FailNow(t, "the call did not return")
		return nil
	}
}
