package semaphore

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zkrecipes/zkrecipes/framework"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// wait bounds every wait for a condition; far above what any condition needs, so
// that a busy machine does not make a test flaky.
const wait = 30 * time.Second

// short is a deadline that an acquisition which cannot succeed runs into.
const short = 300 * time.Millisecond

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

func shortCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), short)
	t.Cleanup(cancel)
	return ctx
}

// newClient is one simulated process: its own client and session, connected to
// servers, closed at the end of the test.
func newClient(t *testing.T, servers []string, opts ...framework.Option) *framework.Client {
	t.Helper()
	c, err := framework.New(servers, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.WaitConnected(testCtx(t)))
	return c
}

// children lists p's children sorted, none when p does not exist.
func children(t *testing.T, c *framework.Client, p string) []string {
	t.Helper()
	names, err := list(c, p)
	require.NoError(t, err)
	return names
}

// list is children for conditions polled off the test's goroutine, which must not
// fail the test themselves.
func list(c *framework.Client, p string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	names, _, err := c.Children(ctx, p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	slices.Sort(names)
	return names, err
}

// eventuallyChildren waits until p's children are exactly want (sorted). A create
// abandoned when its context ended may leave a node that the client deletes in the
// background a moment later, so cleanup after a cancellation is checked this way.
func eventuallyChildren(t *testing.T, c *framework.Client, p string, want ...string) {
	t.Helper()
	slices.Sort(want)
	require.Eventually(t, func() bool {
		names, err := list(c, p)
		return err == nil && slices.Equal(names, want)
	}, wait, 10*time.Millisecond, "children of %s: want %v", p, want)
}

// count is the number of p's children, -1 on error.
func count(c *framework.Client, p string) int {
	names, err := list(c, p)
	if err != nil {
		return -1
	}
	return len(names)
}

func newSemaphore(t *testing.T, c *framework.Client, p string, max int, opts ...Option) *Semaphore {
	t.Helper()
	s, err := New(c, p, max, opts...)
	require.NoError(t, err)
	return s
}

func newMutex(t *testing.T, c *framework.Client, p string, opts ...Option) *Mutex {
	t.Helper()
	m, err := NewMutex(c, p, opts...)
	require.NoError(t, err)
	return m
}

func releaseAll(t *testing.T, leases []*Lease) {
	t.Helper()
	for _, l := range leases {
		require.NoError(t, l.Release(testCtx(t)))
	}
}
