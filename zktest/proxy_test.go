package zktest

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// waitLimit bounds every wait in these tests; none of them should come near it.
const waitLimit = 10 * time.Second

// echoServer is a TCP echo server on 127.0.0.1 that counts the bytes it receives.
type echoServer struct {
	ln       net.Listener
	received atomic.Int64
	wg       sync.WaitGroup

	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

func startEcho(t *testing.T) *echoServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	e := &echoServer{ln: ln, conns: make(map[net.Conn]struct{})}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			e.mu.Lock()
			e.conns[c] = struct{}{}
			e.mu.Unlock()
			e.wg.Add(1)
			go func() {
				defer e.wg.Done()
				defer c.Close()
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						e.received.Add(int64(n))
						if _, err := c.Write(buf[:n]); err != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return e
}

func (e *echoServer) Addr() string { return e.ln.Addr().String() }

func (e *echoServer) Close() {
	_ = e.ln.Close()
	e.mu.Lock()
	for c := range e.conns {
		_ = c.Close()
	}
	e.mu.Unlock()
	e.wg.Wait()
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, waitLimit)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// roundTrip writes msg and reads the echo back.
func roundTrip(t *testing.T, c net.Conn, msg string) {
	t.Helper()
	require.NoError(t, c.SetDeadline(time.Now().Add(waitLimit)))
	_, err := c.Write([]byte(msg))
	require.NoError(t, err)
	got := make([]byte, len(msg))
	_, err = io.ReadFull(c, got)
	require.NoError(t, err)
	require.Equal(t, msg, string(got))
}

// requireClosed checks that the proxy closed c: a read ends with EOF or a
// reset, without data, well before the deadline.
func requireClosed(t *testing.T, c net.Conn) {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(waitLimit)))
	n, err := c.Read(make([]byte, 16))
	require.Zero(t, n, "no data expected")
	require.Error(t, err)
	var ne net.Error
	require.False(t, errors.As(err, &ne) && ne.Timeout(), "read timed out instead of seeing the close: %v", err)
}

func startProxy(t *testing.T, target string) *Proxy {
	t.Helper()
	p, err := StartProxy(target)
	require.NoError(t, err)
	return p
}

func TestProxyForwards(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	echo := startEcho(t)
	defer echo.Close()
	p := startProxy(t, echo.Addr())
	defer p.Close()

	require.Contains(t, p.Addr(), "127.0.0.1:")
	a, b := dial(t, p.Addr()), dial(t, p.Addr())
	roundTrip(t, a, "hello")
	roundTrip(t, b, "world")
	roundTrip(t, a, string(make([]byte, 3*copyBufSize))) // several chunks
	require.Equal(t, int64(10+3*copyBufSize), echo.received.Load())
}

func TestProxyCutAndRestore(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	echo := startEcho(t)
	defer echo.Close()
	p := startProxy(t, echo.Addr())
	defer p.Close()

	c := dial(t, p.Addr())
	roundTrip(t, c, "before")

	p.Cut()
	requireClosed(t, c)
	// New connections are accepted, then closed at once.
	requireClosed(t, dial(t, p.Addr()))

	p.Restore()
	roundTrip(t, dial(t, p.Addr()), "after")
}

func TestProxyDrop(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	echo := startEcho(t)
	defer echo.Close()
	p := startProxy(t, echo.Addr())
	defer p.Close()

	c := dial(t, p.Addr())
	roundTrip(t, c, "before")
	p.Drop()
	requireClosed(t, c)
	roundTrip(t, dial(t, p.Addr()), "after") // no Restore needed
}

func TestProxyBlackhole(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	echo := startEcho(t)
	defer echo.Close()
	p := startProxy(t, echo.Addr())
	defer p.Close()

	old := dial(t, p.Addr())
	roundTrip(t, old, "before")
	before := echo.received.Load()

	p.Blackhole()
	_, err := old.Write([]byte("lost"))
	require.NoError(t, err)
	fresh := dial(t, p.Addr()) // accepted, but passes nothing either
	_, err = fresh.Write([]byte("lost too"))
	require.NoError(t, err)

	// Wait until the proxy has read and dropped both messages, then check that
	// none of it reached the server.
	require.Eventually(t, func() bool { return p.dropped.Load() == int64(len("lost")+len("lost too")) },
		waitLimit, time.Millisecond)
	require.Equal(t, before, echo.received.Load())

	p.Restore()
	// Black-holed connections are closed, and nothing was echoed to them.
	requireClosed(t, old)
	requireClosed(t, fresh)
	roundTrip(t, dial(t, p.Addr()), "after")
	require.Equal(t, before+int64(len("after")), echo.received.Load())
}

func TestProxySetTarget(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	e1, e2 := startEcho(t), startEcho(t)
	defer e1.Close()
	defer e2.Close()
	p := startProxy(t, e1.Addr())
	defer p.Close()

	old := dial(t, p.Addr())
	roundTrip(t, old, "one")

	p.SetTarget(e2.Addr())
	roundTrip(t, dial(t, p.Addr()), "two")
	roundTrip(t, old, "one") // an open connection keeps its target
	require.Equal(t, int64(6), e1.received.Load())
	require.Equal(t, int64(3), e2.received.Load())

	// An unusable target behaves like a stopped server.
	p.SetTarget("127.0.0.1:bad")
	requireClosed(t, dial(t, p.Addr()))
}

func TestProxyClose(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	echo := startEcho(t)
	defer echo.Close()
	p := startProxy(t, echo.Addr())

	c := dial(t, p.Addr())
	roundTrip(t, c, "x")
	p.Blackhole()
	held := dial(t, p.Addr())

	require.NoError(t, p.Close())
	require.NoError(t, p.Close())
	requireClosed(t, c)
	requireClosed(t, held)
	require.ErrorIs(t, p.ExpireSession(context.Background(), time.Hour), ErrProxyClosed)
}

func TestNewProxyCleanup(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	echo := startEcho(t)
	defer echo.Close()
	// The subtest's cleanup closes the proxy before goleak looks.
	t.Run("proxy", func(t *testing.T) {
		p := NewProxy(t, echo.Addr())
		roundTrip(t, dial(t, p.Addr()), "hi")
	})
}

func TestStartProxyRejectsBadTarget(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, target := range []string{"", "127.0.0.1", ":2181", "127.0.0.1:"} {
		p, err := StartProxy(target)
		require.ErrorIs(t, err, ErrProxyTarget, target)
		require.Nil(t, p)
	}
}

func TestProxyExpireSession(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	echo := startEcho(t)
	defer echo.Close()
	p := startProxy(t, echo.Addr())
	defer p.Close()

	require.Error(t, p.ExpireSession(context.Background(), 0))

	c := dial(t, p.Addr())
	roundTrip(t, c, "x")
	// The shortest real wait: 1ms + 0 + 500ms.
	require.NoError(t, p.ExpireSession(context.Background(), time.Millisecond))
	requireClosed(t, c)
	roundTrip(t, dial(t, p.Addr()), "y")

	// A cancelled context ends the wait and still restores the proxy.
	c = dial(t, p.Addr())
	roundTrip(t, c, "z")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := p.ExpireSession(ctx, time.Hour)
	require.ErrorIs(t, err, context.Canceled)
	requireClosed(t, c)
	roundTrip(t, dial(t, p.Addr()), "w")
}

// TestProxyConcurrentFaults flips modes while clients talk, for the race
// detector and to check that Close still ends every goroutine.
func TestProxyConcurrentFaults(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	echo := startEcho(t)
	defer echo.Close()
	p := startProxy(t, echo.Addr())

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var dials atomic.Int64
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 64)
			for ctx.Err() == nil {
				c, err := net.DialTimeout("tcp", p.Addr(), waitLimit)
				if err != nil {
					continue
				}
				dials.Add(1)
				_ = c.SetDeadline(time.Now().Add(50 * time.Millisecond))
				for {
					if _, err := c.Write(buf); err != nil {
						break
					}
					if _, err := c.Read(buf); err != nil {
						break
					}
				}
				_ = c.Close()
			}
		}()
	}
	// Keep flipping until the clients have made plenty of connections across
	// the mode changes.
	for i := 0; dials.Load() < 200; i++ {
		switch i % 4 {
		case 0:
			p.Cut()
		case 1:
			p.Blackhole()
		case 2:
			p.SetTarget(echo.Addr())
		default:
			p.Restore()
		}
	}
	require.NoError(t, p.Close())
	cancel()
	wg.Wait()
}
