package args

import (
	"fmt"
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

type testOptions struct{ n int }

// testOption is a recipe's Option as every recipe declares it.
type testOption func(*testOptions) error

func add(n int) testOption {
	return func(o *testOptions) error {
		if n < 0 {
			return fmt.Errorf("add: %d is negative", n)
		}
		o.n += n
		return nil
	}
}

func TestApply(t *testing.T) {
	var o testOptions
	require.NoError(t, Apply(&o, []testOption{add(1), add(2)}))
	require.Equal(t, 3, o.n, "every option, in order")
	require.NoError(t, Apply(&o, []testOption(nil)), "no options")
	require.Equal(t, 3, o.n)

	o = testOptions{}
	err := Apply(&o, []testOption{add(1), add(-1), add(5)})
	require.EqualError(t, err, "add: -1 is negative", "the option's own error, as it is")
	require.Equal(t, 1, o.n, "the options after a refusal are not applied")

	o = testOptions{}
	err = Apply(&o, []testOption{add(1), nil, add(5)})
	require.EqualError(t, err, "nil testOption (option 2 of 3)", "named by the recipe's type")
	require.Equal(t, 1, o.n)

	// A slice of the bare function type: no name to give.
	err = Apply(&o, []func(*testOptions) error{nil})
	require.EqualError(t, err, "nil option (option 1 of 1)")

	// The error wraps what the option wrapped, so that a recipe's ErrInvalid (added by
	// the recipe) and a framework error (ErrInvalidPath) can both be checked.
	bad := func(o *testOptions) error { return fmt.Errorf("at: %w", framework.ErrInvalidPath) }
	require.ErrorIs(t, Apply(&o, []testOption{bad}), framework.ErrInvalidPath)
}

func TestCheckID(t *testing.T) {
	require.NoError(t, CheckID("worker-1"))
	require.NoError(t, CheckID("a/b"), "an id is data, not a node name")
	require.ErrorContains(t, CheckID(""), "WithID: empty id")
}

func TestCheckPath(t *testing.T) {
	require.NoError(t, CheckPath("/locks/x"))
	require.ErrorContains(t, CheckPath("/"), "root")
	for _, bad := range []string{"", "locks", "/locks/", "/locks//x"} {
		require.ErrorIs(t, CheckPath(bad), framework.ErrInvalidPath, bad)
	}
}
