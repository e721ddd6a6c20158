package framework

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// A traced create says when it was written and its node's czxid, read off its
// reply, while another session writes all along (each of its writes takes a zxid
// of its own) and while the create is namespaced and makes its parents first.
//
// On the shared server, warmed up by the tests before, a create's reply came back
// before the connection layer had noted the create's xid (it did so once the write
// had returned), and the trace's czxid was then 0, as if no reply had been read
// (most runs of -count=30): it is noted before the write now.
func TestTracedCreateGivesTheCzxid(t *testing.T) {
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()}, WithNamespace("traced"))
	writer := newClient(t, []string{srv.Addr()})
	_, err := writer.Create(ctx, "/busy", nil)
	require.NoError(t, err)
	busy, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for busy.Err() == nil {
			_, _ = writer.Set(busy, "/busy", []byte("x"), -1)
		}
	}()
	defer wg.Wait()
	defer stop()

	for i := range 20 {
		var trace CreateTrace
		p, err := c.Create(ctx, fmt.Sprintf("/locks/%d/lock-", i%2), nil, Protected(), Ephemeral(), Sequential(),
			CreatingParentContainers(), c.ForRecipes().Traced(&trace))
		require.NoError(t, err)
		select {
		case <-trace.Written():
		default:
			t.Fatal("a create that returned was not told written")
		}
		ok, stat, err := c.Exists(ctx, p)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, stat.Czxid, trace.Czxid(), "create %d", i)
	}
}

// A refused create has no czxid; one refused before it was sent is told written
// only when Create returns.
func TestTracedCreateThatFailsWritesNothing(t *testing.T) {
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	var trace CreateTrace
	_, err := c.Create(ctx, "/no/parent/lock-", nil, Protected(), Ephemeral(), Sequential(),
		c.ForRecipes().Traced(&trace)) // written, and refused: no parent
	require.ErrorIs(t, err, ErrNoNode)
	<-trace.Written()
	require.Zero(t, trace.Czxid(), "a refused create has no czxid")

	trace = CreateTrace{}
	_, err = c.Create(ctx, "relative/lock-", nil, Protected(), Ephemeral(), Sequential(),
		c.ForRecipes().Traced(&trace)) // refused before anything is sent
	require.ErrorIs(t, err, ErrInvalidPath)
	require.Zero(t, trace.Czxid())
	select {
	case <-trace.Written():
	default:
		t.Fatal("Written stays open after Create returned")
	}
}

// A traced create lists, in the same write, the path ListAfter names (the view's
// path: namespaced here), and the listing, answered after the create, holds the node
// made. Where the create could not carry it (the namespace's node was still to be
// made, by go-zookeeper's requests), Listing says so, and the caller lists. A
// listing of a path that does not exist says so; one with a watch hears the next
// change of the children.
func TestTracedCreateListsAfter(t *testing.T) {
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()}, WithNamespace("listed"))
	for i := range 3 {
		var trace CreateTrace
		trace.ListAfter("/locks", i == 2)
		p, err := c.Create(ctx, "/locks/lock-", nil, Protected(), Ephemeral(), Sequential(),
			CreatingParentContainers(), c.ForRecipes().Traced(&trace))
		require.NoError(t, err)
		names, watch, ok, err := trace.Listing(ctx)
		if i == 0 {
			require.False(t, ok, "the namespace's first use goes through go-zookeeper")
			continue
		}
		require.True(t, ok)
		require.NoError(t, err)
		require.Contains(t, names, p[len("/locks/"):], "the listing came after the create")
		if i == 1 {
			require.Nil(t, watch, "no watch asked for")
			continue
		}
		require.NoError(t, c.Delete(ctx, p, -1))
		select {
		case ev := <-watch:
			require.Equal(t, EventNodeChildrenChanged, ev.Type)
		case <-ctx.Done():
			t.Fatal("the listing's watch never heard the deletion")
		}
	}

	var trace CreateTrace
	trace.ListAfter("/nowhere", false)
	_, err := c.Create(ctx, "/locks/lock-", nil, Protected(), Ephemeral(), Sequential(), c.ForRecipes().Traced(&trace))
	require.NoError(t, err)
	_, _, ok, err := trace.Listing(ctx)
	require.True(t, ok)
	require.ErrorIs(t, err, ErrNoNode)
}
