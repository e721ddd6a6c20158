package group

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

func TestMembersSeeEachOther(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	ca := newClient(t, []string{srv.Addr()})
	a := join(t, ca, "/groups/g", "a", "pa")
	b := join(t, newClient(t, []string{srv.Addr()}), "/groups/g", "b", "pb")
	c := join(t, newClient(t, []string{srv.Addr()}), "/groups/g", "c", "pc")
	all := map[string]string{"a": "pa", "b": "pb", "c": "pc"}
	allSee(t, all, a, b, c)

	require.NoError(t, b.SetPayload(ctx, []byte("pb2")))
	all["b"] = "pb2"
	allSee(t, all, a, b, c)

	require.NoError(t, c.Close(ctx))
	delete(all, "c")
	sees(t, a, all)
	sees(t, b, all)
	require.Equal(t, []string{"a", "b"}, children(t, ca, "/groups/g"))
}

func TestListenHearsEveryChange(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	a := join(t, newClient(t, []string{srv.Addr()}), "/groups/l", "a", "")
	var mu sync.Mutex
	var last map[string][]byte
	stop := a.Listen(func(m map[string][]byte) {
		mu.Lock()
		defer mu.Unlock()
		last = m
	})
	defer stop()
	heard := func() map[string]string {
		mu.Lock()
		defer mu.Unlock()
		s := map[string]string{}
		for id, p := range last {
			s[id] = string(p)
		}
		return s
	}
	b := join(t, newClient(t, []string{srv.Addr()}), "/groups/l", "b", "x")
	require.Eventually(t, func() bool { return equal(heard(), map[string]string{"a": "", "b": "x"}) }, wait, 10*time.Millisecond)
	require.NoError(t, b.SetPayload(ctx, []byte("y")))
	require.Eventually(t, func() bool { return equal(heard(), map[string]string{"a": "", "b": "y"}) }, wait, 10*time.Millisecond)
	require.NoError(t, b.Close(ctx))
	require.Eventually(t, func() bool { return equal(heard(), map[string]string{"a": ""}) }, wait, 10*time.Millisecond)
}

func TestDuplicateIDIsRefused(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	first := join(t, c, "/groups/d", "same", "first")
	other := newClient(t, []string{srv.Addr()})
	second, err := New(other, "/groups/d", "same", []byte("second"))
	require.NoError(t, err)
	err = second.Start(ctx)
	require.ErrorIs(t, err, ErrDuplicateID)
	require.ErrorContains(t, err, `"same"`)
	sees(t, first, map[string]string{"same": "first"})
	require.NoError(t, second.Close(ctx))
	sees(t, first, map[string]string{"same": "first"})
	data, _, err := c.Get(ctx, "/groups/d/same")
	require.NoError(t, err)
	require.Equal(t, "first", string(data), "the member's node is not overwritten")
}

// A member whose session expires leaves the others' views, and comes back as its
// node is made again in the new session.
func TestSessionExpiry(t *testing.T) {
	srv := zkrtest.Server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	ctx := testCtx(t)
	a := join(t, newClient(t, []string{srv.Addr()}), "/groups/e", "a", "pa")
	events := make(chan map[string][]byte, 100)
	stop := a.Listen(func(m map[string][]byte) { events <- m })
	defer stop()
	bClient := newClient(t, []string{proxy.Addr()}, framework.WithSessionTimeout(2*time.Second))
	b := join(t, bClient, "/groups/e", "b", "pb")
	both := map[string]string{"a": "pa", "b": "pb"}
	sees(t, a, both)

	require.NoError(t, proxy.ExpireSession(ctx, bClient.NegotiatedSessionTimeout()))
	left := false
	for !left { // a heard b leave
		select {
		case m := <-events:
			_, in := m["b"]
			left = !in
		case <-time.After(wait):
			t.Fatal("a did not see b leave with its session")
		}
	}
	sees(t, a, both)
	sees(t, b, both)
}

// A stopped server: on its return every member is back, in every view.
func TestServerRestart(t *testing.T) {
	srv := zktest.NewServer(t)
	opts := []framework.Option{framework.WithSessionTimeout(4 * time.Second)}
	ca := newClient(t, []string{srv.Addr()}, opts...)
	a := join(t, ca, "/groups/r", "a", "pa")
	b := join(t, newClient(t, []string{srv.Addr()}, opts...), "/groups/r", "b", "pb")
	both := map[string]string{"a": "pa", "b": "pb"}
	sees(t, a, both)
	srv.Stop()
	require.Equal(t, both, seen(a), "the view is kept while the server is away")
	require.NoError(t, srv.Start())
	sees(t, a, both)
	sees(t, b, both)
	// A view counts its own member while its node is on its way back (after a
	// restart slower than the session, the session is gone): wait for the node.
	eventually(t, func() bool { return slices.Equal([]string{"a", "b"}, children(t, ca, "/groups/r")) })
}

// A member cut off for longer than its session leaves the others' views once its
// session has expired, and returns when the connection does.
func TestConnectionCut(t *testing.T) {
	srv := zkrtest.Server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	a := join(t, newClient(t, []string{srv.Addr()}), "/groups/cut", "a", "pa")
	b := join(t, newClient(t, []string{proxy.Addr()}, framework.WithSessionTimeout(2*time.Second)), "/groups/cut", "b", "pb")
	both := map[string]string{"a": "pa", "b": "pb"}
	sees(t, a, both)
	cut := time.Now()
	proxy.Cut()
	sees(t, a, map[string]string{"a": "pa"})
	t.Logf("b left a's view %v after the cut (session timeout 2s)", time.Since(cut).Round(time.Millisecond))
	require.Equal(t, both, seen(b), "b still counts itself in")
	proxy.Restore()
	sees(t, a, both)
	sees(t, b, both)
}

func TestCloseLeavesNothing(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	m, err := New(c, "/groups/close", "a", nil)
	require.NoError(t, err)
	require.NoError(t, m.Start(ctx))
	require.ErrorIs(t, m.Start(ctx), ErrStarted)
	require.NoError(t, m.Close(ctx))
	require.NoError(t, m.Close(ctx), "a second Close does nothing")
	require.Empty(t, children(t, c, "/groups/close"))
	require.ErrorIs(t, m.Start(ctx), ErrClosed)
	require.ErrorIs(t, m.SetPayload(ctx, nil), ErrClosed)

	ended, cancel := context.WithCancel(ctx)
	cancel()
	m, err = New(c, "/groups/close", "b", nil)
	require.NoError(t, err)
	require.ErrorIs(t, m.Start(ended), context.Canceled)
	require.Empty(t, children(t, c, "/groups/close"), "a cancelled Start leaves no node")
	require.NoError(t, m.Close(ctx))
}
