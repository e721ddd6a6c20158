package semaphore

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zkrecipes/zkrecipes/framework"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(zkrtest.SharedServer(m)) }

const wait = zkrtest.Wait

var (
	testCtx   = zkrtest.Context
	newClient = zkrtest.Client
	children  = zkrtest.Children
)

// short is a deadline that an acquisition which cannot succeed runs into.
const short = 300 * time.Millisecond

func shortCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), short)
	t.Cleanup(cancel)
	return ctx
}

// eventuallyChildren waits until p's children are exactly want (sorted). A create
// abandoned when its context ended may leave a node that the client deletes in the
// background a moment later, so cleanup after a cancellation is checked this way.
func eventuallyChildren(t *testing.T, c *framework.Client, p string, want ...string) {
	t.Helper()
	slices.Sort(want)
	require.Eventually(t, func() bool {
		names, err := zkrtest.List(c, p)
		return err == nil && slices.Equal(names, want)
	}, wait, 10*time.Millisecond, "children of %s: want %v", p, want)
}

// count is the number of p's children, -1 on error.
func count(c *framework.Client, p string) int {
	names, err := zkrtest.List(c, p)
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
