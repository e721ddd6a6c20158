package args

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zkrecipes/zkrecipes/framework"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestCheck(t *testing.T) {
	c, err := framework.New([]string{"127.0.0.1:1"})
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()

	require.NoError(t, Check(c, "/locks/x"))
	require.ErrorContains(t, Check(nil, "/locks/x"), "nil client")
	require.ErrorContains(t, Check(c, "/"), "root")
	for _, bad := range []string{"", "locks", "/locks/", "/locks//x"} {
		require.Error(t, Check(c, bad), bad)
	}
}

func TestCheckName(t *testing.T) {
	require.NoError(t, CheckName("worker-1"))
	for _, bad := range []string{"", "a/b", ".", ".."} {
		require.Error(t, CheckName(bad), bad)
	}
}

func TestDefaultID(t *testing.T) {
	require.True(t, strings.HasSuffix(DefaultID(), ":"+strconv.Itoa(os.Getpid())), DefaultID())
}
