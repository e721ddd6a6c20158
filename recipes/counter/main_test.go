package counter

import (
	"testing"

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

func newCounter(t *testing.T, c *framework.Client, path string, opts ...Option) *Counter {
	t.Helper()
	n, err := New(c, path, opts...)
	require.NoError(t, err)
	return n
}
