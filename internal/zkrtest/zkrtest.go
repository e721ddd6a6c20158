// Package zkrtest holds the helpers that the tests of this module's packages share:
// one client per simulated process, a context bounded for the test, the children of
// a path. (zktest, which starts ZooKeeper, depends on nothing of ours; these do.)
package zkrtest

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
)

// Wait bounds every wait for a condition: far above what any condition needs, so that
// a busy machine does not make a test flaky.
const Wait = 30 * time.Second

// Context is a context for the test, ended with it and after twice Wait at most.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*Wait)
	t.Cleanup(cancel)
	return ctx
}

// Client is one simulated process: its own client and session, connected to
// servers, closed at the end of the test.
func Client(t testing.TB, servers []string, opts ...framework.Option) *framework.Client {
	t.Helper()
	c, err := framework.New(servers, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.WaitConnected(Context(t)))
	return c
}

// Children lists p's children, sorted; none when p does not exist.
func Children(t testing.TB, c *framework.Client, p string) []string {
	t.Helper()
	names, err := List(c, p)
	require.NoError(t, err)
	return names
}

// List is Children for conditions polled off the test's goroutine, which must not
// fail the test themselves.
func List(c *framework.Client, p string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), Wait)
	defer cancel()
	names, _, err := c.Children(ctx, p)
	if errors.Is(err, framework.ErrNoNode) {
		return nil, nil
	}
	slices.Sort(names)
	return names, err
}

// BadPaths are recipe paths that every constructor must refuse: empty, relative,
// with a trailing slash, the root, an empty or relative segment, a character
// ZooKeeper refuses, or bytes that are not UTF-8.
var BadPaths = []string{"", "l", "locks/a", "/locks/", "/", "//", "/a//b", "/a/./b", "/a/../b", "/a/..",
	"\x00", "/\x00", "/a\nb", "/\xff", "/\U0001F600"}

// CheckConstructor checks that a recipe's constructor refuses a nil client and each
// of BadPaths with an error that wraps invalid (the recipe's ErrInvalid) and names
// the problem. construct calls the constructor with the client and path given, and
// valid arguments otherwise.
func CheckConstructor(t testing.TB, invalid error, c *framework.Client, construct func(*framework.Client, string) error) {
	t.Helper()
	err := construct(nil, "/l")
	require.ErrorIs(t, err, invalid)
	require.ErrorContains(t, err, "nil client")
	for _, p := range BadPaths {
		err := construct(c, p)
		require.ErrorIs(t, err, invalid, "%q", p)
		if p == "/" {
			require.ErrorContains(t, err, "root")
		} else {
			require.ErrorIs(t, err, framework.ErrInvalidPath, "%q", p)
			require.ErrorContains(t, err, strconv.Quote(p))
		}
	}
}

// Closed is a client that connected to servers and was closed.
func Closed(t testing.TB, servers []string) *framework.Client {
	t.Helper()
	c := Client(t, servers)
	require.NoError(t, c.Close())
	return c
}

// Receive is the next value from ch, or fails the test, saying what did not come,
// after Wait.
func Receive[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(Wait):
		t.Fatalf("%s did not come within %v", what, Wait)
		var zero T
		return zero
	}
}
