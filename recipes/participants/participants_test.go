package participants

import (
	"context"
	"fmt"
	"path"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/recipes/cache"
	"github.com/zkrecipes/zkrecipes/recipes/election"
	"github.com/zkrecipes/zkrecipes/recipes/mutex"
	"github.com/zkrecipes/zkrecipes/recipes/semaphore"
)

// protected is a participant's node name as a recipe makes it, with the sequence
// the server appended (%010d of an int32).
func protected(i int, name string, seq int32) string {
	return fmt.Sprintf("_c_%08x-d9cb-469f-a165-70867728950e-%s%010d", i, name, seq)
}

type row struct {
	kind  string
	holds bool
	seq   int32
}

func rows(t *testing.T, ps []Participant, seqs map[string]int32) []row {
	t.Helper()
	var out []row
	for _, p := range ps {
		out = append(out, row{p.Kind, p.Holds, seqs[p.Name]})
	}
	return out
}

// Past the wrap of the server's counter (2147483647, then -2147483648) the queue
// keeps the order of creation, as the recipes' queue does; sorted as text, the
// newest node would come first and hold.
func TestOrderPastTheWrap(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layout Layout
		nodes  []row // in creation order, with the verdict wanted
	}{
		{"mutex", Mutex, []row{{"lock", true, 2147483646}, {"lock", false, 2147483647}, {"lock", false, -2147483648}, {"lock", false, -2147483647}}},
		{"latch", Latch, []row{{"latch", true, 2147483647}, {"latch", false, -2147483648}}},
		{"mutex past zero", Mutex, []row{{"lock", true, -2}, {"lock", false, -1}, {"lock", false, 0}, {"lock", false, 1}}},
		{"rwlock", RWLock, []row{{"read", true, 2147483646}, {"read", true, 2147483647}, {"write", false, -2147483648}, {"read", false, -2147483647}}},
		{"curator rwlock", CuratorRWLock, []row{{"write", true, 2147483647}, {"read", false, -2147483648}}},
		{"leases", Leases(2), []row{{"lease", true, 2147483647}, {"lease", true, -2147483648}, {"lease", false, -2147483647}}},
		{"leases, number unknown", Leases(0), []row{{"lease", true, 2147483647}, {"lease", true, -2147483648}, {"lease", true, -2147483647}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			names := map[string]string{"lock": "lock-", "latch": "latch-", "read": "read-", "write": "write-", "lease": "lease-"}
			if tc.layout.names[0] == "__READ__" {
				names["read"], names["write"] = "__READ__", "__WRIT__"
			}
			seqs := map[string]int32{}
			var children []string
			for i, n := range tc.nodes {
				child := protected(i, names[n.kind], n.seq)
				seqs[child] = n.seq
				children = append([]string{child}, children...) // the server lists in no order
			}
			children = append(children, "foreign", protected(99, names[tc.nodes[0].kind]+"0", 1)) // eleven digits: not the server's
			require.Equal(t, tc.nodes, rows(t, Order(children, tc.layout), seqs))
		})
	}
}

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		children []string
		recipe   string
	}{
		{[]string{protected(1, "lock-", 1)}, "mutex"},
		{[]string{"x", protected(1, "latch-", -1)}, "latch"},
		{[]string{protected(1, "read-", 1), protected(2, "write-", 2)}, "rwlock"},
		{[]string{protected(1, "__WRIT__", 1)}, "rwlock"},
		{[]string{protected(1, "lease-", 1)}, "leases"},
		{[]string{"lock-1", "config"}, ""},
		{nil, ""},
	} {
		l, ok := Detect(tc.children)
		require.Equal(t, tc.recipe != "", ok, tc.children)
		require.Equal(t, tc.recipe, l.Recipe(), tc.children)
	}
	require.True(t, IsSemaphore([]string{"leases"}))
	require.False(t, IsSemaphore([]string{"lease"}))
}

// Read reads the recipes' own nodes on a server, and agrees with their own
// Participants, from the client and from a cache's copy.
func TestRead(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := zkrtest.Context(t)
	c := zkrtest.Client(t, []string{srv.Addr()})

	var ms []*mutex.Mutex
	for i := range 3 {
		m, err := mutex.New(c, "/m", mutex.WithID(fmt.Sprint("m", i)))
		require.NoError(t, err)
		ms = append(ms, m)
	}
	require.NoError(t, ms[0].Acquire(ctx))
	t.Cleanup(func() { _ = ms[0].Release(context.Background()) })
	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	for _, m := range ms[1:] {
		wg.Go(func() { _ = m.Acquire(wctx) })
	}
	eventually(t, "three in the queue", func() bool { return len(zkrtest.Children(t, c, "/m")) == 3 })
	lib, err := ms[0].Participants(ctx)
	require.NoError(t, err)
	got, err := Read(ctx, FromClient(c), "/m", Mutex)
	require.NoError(t, err)
	require.Len(t, got, 3)
	for i, p := range got {
		require.Equal(t, lib[i].Node, p.Path)
		require.Equal(t, lib[i].ID, p.ID)
		require.Equal(t, lib[i].Holder, p.Holds)
		require.Equal(t, c.SessionID(), p.Stat.EphemeralOwner)
		require.Equal(t, path.Base(p.Path), p.Name)
	}
	require.Equal(t, "m0", got[0].ID)

	// A missing path has no participants.
	none, err := Read(ctx, FromClient(c), "/nothing", Mutex)
	require.NoError(t, err)
	require.Empty(t, none)

	// A latch through a cache.
	l, err := election.NewLatch(c, "/e", election.WithID("leader"))
	require.NoError(t, err)
	require.NoError(t, l.Start(ctx))
	t.Cleanup(func() { _ = l.Close(context.Background()) })
	require.NoError(t, l.Await(ctx))
	ca, err := cache.New(c, "/e", cache.Depth(1))
	require.NoError(t, err)
	t.Cleanup(func() { _ = ca.Close(context.Background()) })
	require.NoError(t, ca.Start(ctx))
	got, err = Read(ctx, FromCache(ca), "/e", Latch)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, Participant{Name: path.Base(l.Node()), Kind: "latch", Holds: true, Path: l.Node(), ID: "leader", Stat: got[0].Stat}, got[0])
}

// A semaphore's leases hold; with the number of leases unknown, the lease node of
// the first acquirer queued on its lock is still counting, and does not.
func TestReadSemaphore(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := zkrtest.Context(t)
	holder := zkrtest.Client(t, []string{srv.Addr()})
	waiter := zkrtest.Client(t, []string{srv.Addr()})

	s, err := semaphore.New(holder, "/s", 1, semaphore.WithID("holder"))
	require.NoError(t, err)
	leases, err := s.Acquire(ctx, 1)
	require.NoError(t, err)
	t.Cleanup(func() { _ = leases[0].Release(context.Background()) })
	w, err := semaphore.New(waiter, "/s", 1, semaphore.WithID("waiter"))
	require.NoError(t, err)
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = w.Acquire(wctx, 1)
	}()
	t.Cleanup(func() { cancel(); <-done })
	eventually(t, "the waiter counting", func() bool {
		return len(zkrtest.Children(t, holder, "/s/leases")) == 2 && len(zkrtest.Children(t, holder, "/s/locks")) == 1
	})

	type verdict struct {
		id, kind string
		holds    bool
	}
	read := func(n int) []verdict {
		ps, err := ReadSemaphore(ctx, FromClient(holder), "/s", n)
		require.NoError(t, err)
		var out []verdict
		for _, p := range ps {
			out = append(out, verdict{p.ID, p.Kind, p.Holds})
		}
		return out
	}
	want := []verdict{{"holder", "lease", true}, {"waiter", "lease", false}, {"waiter", "lock", false}}
	require.Equal(t, want, read(0))
	require.Equal(t, want, read(1))
	lib, err := s.Participants(ctx)
	require.NoError(t, err)
	require.Equal(t, []bool{true, false}, []bool{lib[0].Holder, lib[1].Holder})
}

// eventually waits for cond, which a test checks every few milliseconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(zkrtest.Wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
