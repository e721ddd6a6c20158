// Package zkrtest holds the helpers that the tests of this module's packages share:
// one client per simulated process, a context bounded for the test, the children of
// a path. (zktest, which starts ZooKeeper, depends on nothing of ours; these do.)
package zkrtest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
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
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	slices.Sort(names)
	return names, err
}
