package election

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

const (
	leadershipChanges = "zkrecipes.election.leadership_changes"
	waitDuration      = "zkrecipes.lock.wait.duration"
	waiters           = "zkrecipes.lock.waiters"
	holdsLost         = "zkrecipes.lock.holds_lost"
)

// Two latches lead in turn, then a selector leads once: every gain and end of
// leadership is counted, and each wait for it.
func TestLeadershipMetrics(t *testing.T) {
	srv := zkrtest.Server(t)
	tm := zkrtest.NewTelemetry(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()}, tm.Options...)

	first, second := newLatch(t, c, "/election/m"), newLatch(t, c, "/election/m")
	require.NoError(t, first.Start(ctx))
	require.NoError(t, first.Await(ctx))
	require.NoError(t, second.Start(ctx))
	require.Eventually(t, func() bool { return tm.Sum(t, waiters, "recipe", "latch") == 1 }, wait, 5*time.Millisecond)
	require.NoError(t, first.Close(ctx))
	require.NoError(t, second.Await(ctx))
	require.NoError(t, second.Close(ctx))

	ended := make(chan struct{})
	s, err := NewSelector(c, "/election/s", func(context.Context, Term) error { close(ended); return nil })
	require.NoError(t, err)
	require.NoError(t, s.Start(ctx))
	<-ended
	require.NoError(t, s.Close(ctx))

	for recipe, terms := range map[string]int64{"latch": 2, "selector": 1} {
		require.Equal(t, terms, tm.Sum(t, leadershipChanges, "recipe", recipe, "change", "gained"), recipe)
		require.Equal(t, terms, tm.Sum(t, leadershipChanges, "recipe", recipe, "change", "ended"), recipe)
		require.Equal(t, terms, tm.Count(t, waitDuration, "recipe", recipe, "outcome", "acquired"), recipe)
		require.Equal(t, terms, tm.Count(t, "zkrecipes.lock.hold.duration", "recipe", recipe), recipe)
		require.Zero(t, tm.Sum(t, waiters, "recipe", recipe), recipe)
	}
	require.Equal(t, int64(3), tm.Count(t, waitDuration), "no other wait")
	require.Zero(t, tm.Sum(t, holdsLost), "no leadership lost")
	tm.RequireBoundedAttributes(t)

	spans := map[string]int{}
	for _, s := range tm.Spans() {
		attrs := zkrtest.SpanAttributes(s)
		require.Equal(t, attrs["recipe"]+" acquire", s.Name())
		require.Equal(t, map[string]string{"latch": "/election/m", "selector": "/election/s"}[attrs["recipe"]], attrs["path"], s.Name())
		spans[s.Name()+" "+attrs["outcome"]]++
	}
	require.Equal(t, map[string]int{"latch acquire acquired": 2, "selector acquire acquired": 1}, spans,
		"a span per wait for leadership")
}

// A latch whose connection is cut loses its leadership, counted as a hold lost and a
// leadership ended, and leads again in the same session once the connection is back.
func TestLostLeadershipMetrics(t *testing.T) {
	srv := zkrtest.Server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	tm := zkrtest.NewTelemetry(t)
	ctx := testCtx(t)
	l := newLatch(t, newClient(t, []string{proxy.Addr()}, append(tm.Options, framework.WithSessionTimeout(4*time.Second))...), "/election/lost")
	require.NoError(t, l.Start(ctx))
	require.NoError(t, l.Await(ctx))
	term, cancel := l.Context(ctx)
	defer cancel()
	proxy.Cut()
	<-term.Done()
	proxy.Restore()
	require.NoError(t, l.Await(ctx), "leads again in the same session")
	require.NoError(t, l.Close(ctx))

	require.Equal(t, int64(1), tm.Sum(t, holdsLost, "recipe", "latch"))
	require.Equal(t, int64(2), tm.Sum(t, leadershipChanges, "recipe", "latch", "change", "gained"))
	require.Equal(t, int64(2), tm.Sum(t, leadershipChanges, "recipe", "latch", "change", "ended"))
	require.Equal(t, int64(2), tm.Count(t, "zkrecipes.lock.hold.duration", "recipe", "latch"), "the lost term counts until it ended")
	require.Equal(t, int64(2), tm.Count(t, waitDuration, "recipe", "latch", "outcome", "acquired"))
	require.Zero(t, tm.Sum(t, waiters, "recipe", "latch"))
}
