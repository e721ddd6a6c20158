package nodes

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(zkrtest.SharedServer(m)) }

const wait = zkrtest.Wait

var (
	testCtx   = zkrtest.Context
	newClient = zkrtest.Client
)

func newNode(t *testing.T, c *framework.Client, path string, data []byte, opts ...Option) *PersistentNode {
	t.Helper()
	p, err := New(c, path, data, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

// nodeIs waits until the node at path exists with data, owned as owner says
// (an ephemeral owner's session, or 0 for a persistent node), and returns its stat.
func nodeIs(t *testing.T, c *framework.Client, path string, data string, owner func() int64) *framework.Stat {
	t.Helper()
	var stat *framework.Stat
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		got, s, err := c.Get(ctx, path)
		if err != nil || string(got) != data || s.EphemeralOwner != owner() {
			return false
		}
		stat = s
		return true
	}, wait, 10*time.Millisecond, "%s holds %q", path, data)
	return stat
}

// gone waits until nothing is at path.
func gone(t *testing.T, c *framework.Client, path string) {
	t.Helper()
	require.Eventually(t, func() bool {
		ok, _, err := c.Exists(context.Background(), path)
		return err == nil && !ok
	}, wait, 10*time.Millisecond, "%s is gone", path)
}

func persistentOwner() int64 { return 0 }
