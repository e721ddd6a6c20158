package rwlock

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zkrecipes/zkrecipes/framework"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const wait = 30 * time.Second

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

func newClient(t *testing.T, servers []string, opts ...framework.Option) *framework.Client {
	t.Helper()
	c, err := framework.New(servers, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.WaitConnected(testCtx(t)))
	return c
}

func newRW(t *testing.T, c *framework.Client, path string, opts ...Option) *RWLock {
	t.Helper()
	l, err := New(c, path, opts...)
	require.NoError(t, err)
	return l
}

func children(t *testing.T, c *framework.Client, p string) []string {
	t.Helper()
	names, _, err := c.Children(testCtx(t), p)
	require.NoError(t, err)
	return names
}

// queued waits until path has n participant nodes.
func queued(t *testing.T, c *framework.Client, p string, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return len(children(t, c, p)) == n }, wait, 5*time.Millisecond)
}
