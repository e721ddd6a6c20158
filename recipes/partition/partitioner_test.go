package partition

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/recipes/group"
	"github.com/zkrecipes/zkrecipes/recipes/mutex"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// checkMoves fails unless exactly the fewest items moved from before to after, as
// a balanced assignment over the members in after must move, and the items that
// stayed ran on without a pause (no work of theirs started in between).
func checkMoves(t *testing.T, before, after map[string]string, runsBefore, runsAfter map[string]int) {
	t.Helper()
	var members []string
	for _, m := range after {
		if !slices.Contains(members, m) {
			members = append(members, m)
		}
	}
	moves := moved(before, after)
	require.Equal(t, minMoves(before, members), moves, "items moved, %v -> %v", before, after)
	for it, m := range before {
		if after[it] == m {
			require.Equal(t, runsBefore[it], runsAfter[it], "%s stayed with %s but its work was restarted", it, m)
		}
	}
	t.Logf("%d members: %d items moved, the fewest possible", len(members), moves)
}

// 12 items over 3 members, then 4 (one added), 3 (one closed), 2 (one expired):
// every step exclusive (the registers), balanced and with the fewest moves.
func TestSharesFollowTheMembers(t *testing.T) {
	srv := zkrtest.Server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	ctx := testCtx(t)
	r := newRegisters(t)
	items := names("job", 12)
	opts := []Option{Items(items...)}
	members := map[string]*Partitioner{
		"a": start(t, newClient(t, []string{srv.Addr()}), "/work", "a", r, opts...),
		"b": start(t, newClient(t, []string{srv.Addr()}), "/work", "b", r, opts...),
		// c is cut off later, for longer than its session.
		"c": start(t, newClient(t, []string{proxy.Addr()}, framework.WithSessionTimeout(2*time.Second)), "/work", "c", r, opts...),
	}
	owners := settled(t, r, items, members)
	_, runs := r.snapshot()
	step := func() {
		t.Helper()
		next := settled(t, r, items, members)
		_, nextRuns := r.snapshot()
		checkMoves(t, owners, next, runs, nextRuns)
		owners, runs = next, nextRuns
	}

	// d joins.
	members["d"] = start(t, newClient(t, []string{srv.Addr()}), "/work", "d", r, opts...)
	step()

	// b leaves.
	require.NoError(t, members["b"].Close(ctx))
	delete(members, "b")
	step()

	// c falls silent for good (a partition: no EOF, nothing): its works end once its
	// client notices, its session expires, and the others take its items.
	cut := time.Now()
	proxy.Blackhole()
	require.Eventually(t, func() bool {
		inside, _ := r.snapshot()
		return !slices.Contains(slices.Collect(maps.Values(inside)), "c")
	}, wait, 10*time.Millisecond, "c's works did not end")
	t.Logf("c's works ended %v after it fell silent (session timeout 2s)", time.Since(cut).Round(time.Millisecond))
	cutOff := members["c"]
	delete(members, "c")
	step()

	// Closing without a connection: it returns once its context ends, its node's
	// delete left to the background (the session is gone with it anyway).
	closeCtx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_ = cutOff.Close(closeCtx)
	require.Empty(t, cutOff.Owned())
}

// A work that ignores its ctx keeps its item: nobody takes it until it returns.
func TestWorkThatIgnoresItsContext(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	r := newRegisters(t)
	finish := make(chan struct{})
	stubborn := func(ctx context.Context, it Item) error {
		r.enter("a", it)
		defer r.leave("a", it)
		<-ctx.Done()
		<-finish // and then some
		return nil
	}
	ca := newClient(t, []string{srv.Addr()})
	a, err := New(ca, "/stubborn", stubborn, WithID("a"), Items("only"))
	require.NoError(t, err)
	require.NoError(t, a.Start(ctx))
	require.Eventually(t, func() bool { return slices.Equal(a.Owned(), []string{"only"}) }, wait, 10*time.Millisecond)

	b := start(t, newClient(t, []string{srv.Addr()}), "/stubborn", "b", r, Items("only"))
	closed := make(chan error, 1)
	go func() { closed <- a.Close(ctx) }() // a leaves: the item is b's to take
	// b queues for the item's lock behind a, and waits there.
	require.Eventually(t, func() bool { return len(children(t, ca, "/stubborn/items/only")) == 2 }, wait, 10*time.Millisecond)
	inside, _ := r.snapshot()
	require.Equal(t, "a", inside["only"], "the item is still a's")
	require.Empty(t, b.Owned())

	close(finish)
	require.NoError(t, <-closed)
	require.Eventually(t, func() bool { return slices.Equal(b.Owned(), []string{"only"}) }, wait, 10*time.Millisecond)
}

// ItemsFrom follows the children of another path as they come and go.
func TestItemsFrom(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	r := newRegisters(t)
	_, err := c.Create(ctx, "/jobs", nil)
	require.NoError(t, err)
	var items []string
	add := func(name string) {
		_, err := c.Create(ctx, "/jobs/"+name, nil)
		require.NoError(t, err)
		items = append(items, name)
	}
	for _, name := range names("j", 4) {
		add(name)
	}
	members := map[string]*Partitioner{
		"a": start(t, newClient(t, []string{srv.Addr()}), "/shared", "a", r, ItemsFrom("/jobs")),
		"b": start(t, newClient(t, []string{srv.Addr()}), "/shared", "b", r, ItemsFrom("/jobs")),
	}
	settled(t, r, items, members)

	created := time.Now()
	add("j-4")
	add("j-5")
	settled(t, r, items, members)
	t.Logf("the new items' works ran, the shares balanced, %v after their creation", time.Since(created).Round(time.Millisecond))

	deleted := time.Now()
	require.NoError(t, c.Delete(ctx, "/jobs/j-1", -1))
	items = slices.DeleteFunc(items, func(s string) bool { return s == "j-1" })
	inside := settled(t, r, items, members)
	require.NotContains(t, inside, "j-1", "the deleted item's work ended")
	t.Logf("the deleted item's work ended, the shares balanced, %v after its deletion", time.Since(deleted).Round(time.Millisecond))
}

// Close ends the works and hands every item over; nothing is left on the server.
func TestCloseHandsOverAndLeavesNothing(t *testing.T) {
	srv := zktest.NewServer(t, zktest.WithContainerCheckInterval(100*time.Millisecond))
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	r := newRegisters(t)
	p := start(t, c, "/closing", "a", r, Items("x", "y"))
	settled(t, r, []string{"x", "y"}, map[string]*Partitioner{"a": p})
	require.NoError(t, p.Close(ctx))
	require.NoError(t, p.Close(ctx), "a second Close does nothing")
	require.Empty(t, p.Owned())
	inside, _ := r.snapshot()
	require.Empty(t, inside, "every work returned")
	require.ErrorIs(t, p.Start(ctx), ErrClosed)
	require.Eventually(t, func() bool {
		ok, _, err := c.Exists(ctx, "/closing")
		return err == nil && !ok
	}, wait, 50*time.Millisecond, "the containers go once empty")
}

// A work that returns while its item is still ours runs again, after the pause, with
// its error logged at Warn through the client's logger.
func TestWorkThatReturnsRunsAgain(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	logs := &zkrtest.SyncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	runs := make(chan Item, 10)
	p, err := New(newClient(t, []string{srv.Addr()}, framework.WithLogger(logger)), "/again", func(ctx context.Context, it Item) error {
		select {
		case runs <- it:
		case <-ctx.Done():
		}
		return errors.New("failed")
	}, WithID("a"), Items("x"), WithRestartPause(10*time.Millisecond))
	require.NoError(t, err)
	require.NoError(t, p.Start(ctx))
	defer p.Close(ctx)
	first, second := <-runs, <-runs
	require.Equal(t, first, second, "the same hold, the same token")
	require.Equal(t, []string{"x"}, p.Owned())
	for _, want := range []string{"level=WARN", "item=x", "error=failed"} {
		require.Contains(t, logs.String(), want)
	}
}

func TestDuplicateID(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	r := newRegisters(t)
	start(t, newClient(t, []string{srv.Addr()}), "/dup", "same", r, Items("x"))
	p, err := New(newClient(t, []string{srv.Addr()}), "/dup", r.work("same"), WithID("same"), Items("x"))
	require.NoError(t, err)
	err = p.Start(ctx)
	require.ErrorIs(t, err, group.ErrDuplicateID)
	require.ErrorContains(t, err, fmt.Sprintf("%q", "same"))
}

// A work that ignores its ctx keeps its item only as long as its session lives: once
// the session is gone, so is the lock, and another member takes the item.
func TestWorkThatIgnoresItsContextLosesItWithItsSession(t *testing.T) {
	srv := zkrtest.Server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	ctx := testCtx(t)
	r := newRegisters(t)
	finish := make(chan struct{})
	defer close(finish)
	started := make(chan struct{}, 1)
	stubborn := func(ctx context.Context, it Item) error {
		started <- struct{}{}
		<-finish // ctx or not
		return nil
	}
	a, err := New(newClient(t, []string{proxy.Addr()}, framework.WithSessionTimeout(2*time.Second)), "/stubborn", stubborn,
		WithID("a"), Items("only"))
	require.NoError(t, err)
	require.NoError(t, a.Start(ctx))
	<-started
	b := start(t, newClient(t, []string{srv.Addr()}), "/stubborn", "b", r, Items("only"))

	proxy.Blackhole() // a's session expires while its work runs on
	require.Eventually(t, func() bool { return slices.Equal(b.Owned(), []string{"only"}) }, wait, 10*time.Millisecond)
	closeCtx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	require.ErrorIs(t, a.Close(closeCtx), context.DeadlineExceeded, "a's work has not returned")
}

// A client closed under a running Partitioner ends every work, and the Partitioner
// stops trying; Close still returns.
func TestClientClosedUnderIt(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	c, err := framework.New([]string{srv.Addr()})
	require.NoError(t, err)
	require.NoError(t, c.WaitConnected(ctx))
	r := newRegisters(t)
	p := start(t, c, "/closing-client", "a", r, Items("x", "y"))
	settled(t, r, []string{"x", "y"}, map[string]*Partitioner{"a": p})
	require.NoError(t, c.Close())
	require.Eventually(t, func() bool {
		inside, _ := r.snapshot()
		return len(inside) == 0 && len(p.Owned()) == 0
	}, wait, 10*time.Millisecond, "the works ended")
	closeCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_ = p.Close(closeCtx)
}

// Members whose views of the group disagree: c, cut off from the server (its
// session kept, and its holds with it, by SessionErrorPolicy), does not see d join
// and goes on running all its items; a and d do, and a hands its share to d at once,
// while d queues behind c for the items c is to give up, without running them (the
// registers). Once c is back it sees d and hands them over: all converge, having
// moved the fewest items.
func TestViewsThatDisagree(t *testing.T) {
	srv := zkrtest.Server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	c := newClient(t, []string{srv.Addr()})
	r := newRegisters(t)
	items := names("job", 12)
	opts := []Option{Items(items...)}
	members := map[string]*Partitioner{
		"a": start(t, newClient(t, []string{srv.Addr()}), "/views", "a", r, opts...),
		// Long enough a session that c keeps it through the cut.
		"c": start(t, newClient(t, []string{proxy.Addr()}, framework.WithSessionTimeout(20*time.Second),
			framework.WithErrorPolicy(framework.SessionErrorPolicy)), "/views", "c", r, opts...),
	}
	owners := settled(t, r, items, members)
	_, runs := r.snapshot()

	proxy.Cut()
	members["d"] = start(t, newClient(t, []string{srv.Addr()}), "/views", "d", r, opts...)
	target := Assign(items, []string{"a", "c", "d"}, owners)
	require.Eventually(t, func() bool {
		inside, _ := r.snapshot()
		for _, it := range items {
			switch {
			case owners[it] == "c" && target[it] == "d": // d waits behind c, who runs on
				queue, err := zkrtest.List(c, "/views/items/"+it)
				if err != nil || len(queue) != 2 || inside[it] != "c" {
					return false
				}
			case inside[it] != target[it]:
				return false
			}
		}
		return true
	}, wait, 10*time.Millisecond, "a's items did not move to d, or d did not queue behind c")
	require.Len(t, members["c"].Owned(), 6, "c, not seeing d, believes it owns its six")

	proxy.Restore()
	next := settled(t, r, items, members)
	require.Equal(t, target, next)
	_, nextRuns := r.snapshot()
	checkMoves(t, owners, next, runs, nextRuns)
}

// Without WithID a member is host:pid: its node under path/members, and the owner
// its item locks name.
func TestDefaultID(t *testing.T) {
	srv := zkrtest.Server(t)
	c := newClient(t, []string{srv.Addr()})
	host, err := os.Hostname()
	require.NoError(t, err)
	id := host + ":" + strconv.Itoa(os.Getpid())
	r := newRegisters(t)
	p, err := New(newClient(t, []string{srv.Addr()}), "/default", r.work(id), Items("x"))
	require.NoError(t, err)
	require.NoError(t, p.Start(testCtx(t)))
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	require.Equal(t, id, p.ID())
	require.Equal(t, []string{id}, children(t, c, "/default/members"))
	settled(t, r, []string{"x"}, map[string]*Partitioner{id: p})
}

// Start returns once the member has joined, without waiting for its items: here the
// only item's lock is held by someone outside the set, and the item runs once they
// let go.
func TestStartDoesNotWaitForItems(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	other, err := mutex.New(newClient(t, []string{srv.Addr()}), "/waiting/items/x", mutex.WithID("outsider"))
	require.NoError(t, err)
	require.NoError(t, other.Acquire(ctx))

	r := newRegisters(t)
	p := start(t, newClient(t, []string{srv.Addr()}), "/waiting", "a", r, Items("x"))
	require.Empty(t, p.Owned())
	inside, _ := r.snapshot()
	require.Empty(t, inside)

	require.NoError(t, other.Release(ctx))
	settled(t, r, []string{"x"}, map[string]*Partitioner{"a": p})
}

// A work's ctx says why it ended (context.Cause): a lock that may be lost (a cut
// connection, so Suspended), an item that moves to a member that joins, and Close.
func TestWorkContextSaysWhyItEnded(t *testing.T) {
	srv := zkrtest.Server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	ctx := testCtx(t)
	type ended struct {
		item  string
		cause error
	}
	ends := make(chan ended, 16)
	running := make(chan string, 16)
	work := func(ctx context.Context, it Item) error {
		running <- it.Name
		<-ctx.Done()
		ends <- ended{it.Name, context.Cause(ctx)}
		return nil
	}
	a, err := New(newClient(t, []string{proxy.Addr()}), "/why", work, WithID("a"), Items("x", "y"))
	require.NoError(t, err)
	require.NoError(t, a.Start(ctx))
	t.Cleanup(func() { _ = a.Close(context.Background()) })
	nextRunning := func() string { return zkrtest.Receive(t, running, "a work's start") }
	nextEnd := func() ended { return zkrtest.Receive(t, ends, "a work's end") }
	require.ElementsMatch(t, []string{"x", "y"}, []string{nextRunning(), nextRunning()})

	proxy.Cut() // Suspended: both holds may be lost
	for range 2 {
		e := nextEnd()
		require.ErrorIs(t, e.cause, mutex.ErrLost, e.item)
	}
	proxy.Restore()
	require.ElementsMatch(t, []string{"x", "y"}, []string{nextRunning(), nextRunning()}, "both taken again")

	r := newRegisters(t)
	b := start(t, newClient(t, []string{srv.Addr()}), "/why", "b", r, Items("x", "y"))
	moved := nextEnd()
	require.ErrorIs(t, moved.cause, errMoving, moved.item)
	require.Eventually(t, func() bool { return len(b.Owned()) == 1 }, wait, 10*time.Millisecond)

	require.NoError(t, a.Close(ctx))
	closed := nextEnd()
	require.NotEqual(t, moved.item, closed.item)
	require.ErrorIs(t, closed.cause, ErrClosed, closed.item)
}

// When another client deletes the node of an item's lock, the owner's work ends at
// once, saying the node was deleted, and the owner takes the item again with a new
// node and a greater token: one work per item throughout (the registers), and every
// item run again.
func TestAnItemWhoseNodeIsDeletedIsTakenAgain(t *testing.T) {
	srv := zkrtest.Server(t)
	c, op := newClient(t, []string{srv.Addr()}), newClient(t, []string{srv.Addr()})
	r := newRegisters(t)
	items := []string{"w", "x", "y", "z"}
	members := map[string]*Partitioner{
		"a": start(t, c, "/deleted", "a", r, Items(items...)),
		"b": start(t, c, "/deleted", "b", r, Items(items...)),
	}
	owner := settled(t, r, items, members)["x"]
	_, runs := r.snapshot()
	held := children(t, op, "/deleted/items/x")
	require.Len(t, held, 1)

	zkrtest.DeleteHolder(t, op, "/deleted/items/x/"+held[0])
	require.Eventually(t, func() bool {
		inside, now := r.snapshot()
		return now["x"] == runs["x"]+1 && inside["x"] == owner
	}, wait, 10*time.Millisecond, "x's owner runs it again")
	again := children(t, op, "/deleted/items/x")
	require.Len(t, again, 1)
	require.NotEqual(t, held[0], again[0], "with a new node")
	settled(t, r, items, members)
}
