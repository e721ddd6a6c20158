package mutex

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

// newClient is one simulated process: its own session.
func newClient(t *testing.T, servers []string, opts ...framework.Option) *framework.Client {
	t.Helper()
	c, err := framework.New(servers, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.WaitConnected(testCtx(t)))
	return c
}

func newMutex(t *testing.T, c *framework.Client, path string, opts ...Option) *Mutex {
	t.Helper()
	m, err := New(c, path, opts...)
	require.NoError(t, err)
	return m
}

func children(t *testing.T, c *framework.Client, p string) []string {
	t.Helper()
	names, _, err := c.Children(testCtx(t), p)
	require.NoError(t, err)
	return names
}
