package mutex

import (
	"testing"

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

func newMutex(t *testing.T, c *framework.Client, path string, opts ...Option) *Mutex {
	t.Helper()
	m, err := New(c, path, opts...)
	require.NoError(t, err)
	return m
}
