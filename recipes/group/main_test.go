package group

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
	children  = zkrtest.Children
)

// join starts a member, left at the end of the test.
func join(t *testing.T, c *framework.Client, path, id, payload string) *Member {
	t.Helper()
	m, err := New(c, path, id, []byte(payload))
	require.NoError(t, err)
	require.NoError(t, m.Start(testCtx(t)))
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	return m
}

// seen is a member's view as id -> payload strings.
func seen(m *Member) map[string]string {
	s := map[string]string{}
	for id, p := range m.Members() {
		s[id] = string(p)
	}
	return s
}

// sees waits until m sees exactly want.
func sees(t *testing.T, m *Member, want map[string]string) {
	t.Helper()
	require.Eventually(t, func() bool { return equal(seen(m), want) }, wait, 10*time.Millisecond,
		"%s sees %v, not %v", m.id, seen(m), want)
}

// allSee waits until each of members sees exactly want.
func allSee(t *testing.T, want map[string]string, members ...*Member) {
	t.Helper()
	for _, m := range members {
		sees(t, m, want)
	}
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// eventually polls cond on the test's goroutine (cond may fail the test) until it
// holds, for at most wait.
func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("the condition did not hold in time")
		}
		<-tick.C
	}
}
