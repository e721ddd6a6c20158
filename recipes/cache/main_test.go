package cache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
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
)

// started is a started cache with a history checker listening from the start,
// closed at the end of the test.
func started(t *testing.T, c *framework.Client, path string, opts ...Option) (*Cache, *history) {
	t.Helper()
	ca, err := New(c, path, opts...)
	require.NoError(t, err)
	h := record(ca)
	t.Cleanup(func() { _ = ca.Close(context.Background()) })
	require.NoError(t, ca.Start(testCtx(t)))
	h.requireClean(t)
	return ca, h
}

// history records a listener's events and checks each against zkrtest's model of
// what the listener was told.
type history struct {
	mu     sync.Mutex
	events []Event
	model  *zkrtest.CacheHistory
}

func record(ca *Cache) *history {
	h := &history{model: zkrtest.NewCacheHistory(ca.Path())}
	ca.Listen(func(ev Event) {
		h.mu.Lock()
		h.events = append(h.events, ev)
		h.mu.Unlock()
		h.model.Hear(ev.Type.String(), ev.Path, cached(ev.Old), cached(ev.New))
	})
	return h
}

func cached(n Node) zkrtest.CachedNode {
	return zkrtest.CachedNode{Path: n.Path, Data: n.Data, Czxid: n.Stat.Czxid, Mzxid: n.Stat.Mzxid, Version: n.Stat.Version}
}

func sameNode(a, b Node) bool {
	return a.Path == b.Path && bytes.Equal(a.Data, b.Data) && a.Stat == b.Stat
}

func (h *history) requireClean(t *testing.T) {
	t.Helper()
	require.Empty(t, h.model.Violations(), "impossible history")
}

func (h *history) get() []Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.events)
}

// since returns the events from the n-th on.
func (h *history) since(n int) []Event { return h.get()[n:] }

// waitFor waits for an event of type typ after the n-th, and returns its index.
func (h *history) waitFor(t *testing.T, n int, typ EventType) int {
	t.Helper()
	var at int
	require.Eventually(t, func() bool {
		for i, ev := range h.since(n) {
			if ev.Type == typ {
				at = n + i
				return true
			}
		}
		return false
	}, wait, 5*time.Millisecond, "waiting for %v after event %d: %v", typ, n, brief(h.since(n)))
	return at
}

// waitEvents waits until the listener has heard want after the n-th event, and
// nothing else.
func (h *history) waitEvents(t *testing.T, n int, want ...string) {
	t.Helper()
	require.Equal(t, want, h.waitHeard(t, n, len(want)))
}

// waitEventsUnordered is waitEvents for events whose order among themselves is
// free (the model still checks parents before children).
func (h *history) waitEventsUnordered(t *testing.T, n int, want ...string) {
	t.Helper()
	require.ElementsMatch(t, want, h.waitHeard(t, n, len(want)))
}

// waitHeard waits for count events after the n-th, checks the history, and returns
// them briefly.
func (h *history) waitHeard(t *testing.T, n, count int) []string {
	t.Helper()
	require.Eventually(t, func() bool { return len(h.since(n)) >= count }, wait, 5*time.Millisecond,
		"waiting for %d events, heard %v", count, brief(h.since(n)))
	h.requireClean(t)
	return brief(h.since(n))
}

// brief writes events as "Created /a".
func brief(evs []Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.Type.String()
		if ev.Path != "" {
			out[i] += " " + ev.Path
		}
	}
	return out
}

// serverTree reads the subtree at root from the server, depth levels deep, as the
// cache should have it.
func serverTree(c *framework.Client, root string, depth int, withData bool) ([]Node, error) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var out []Node
	var walk func(p string, d int) error
	walk = func(p string, d int) error {
		data, stat, err := c.Get(ctx, p)
		if errors.Is(err, framework.ErrNoNode) {
			return nil
		}
		if err != nil {
			return err
		}
		if !withData {
			data = nil
		}
		n := Node{Path: p, Data: data, Stat: *stat}
		if d >= depth {
			out = append(out, n)
			return nil
		}
		names, cstat, err := c.Children(ctx, p)
		if errors.Is(err, framework.ErrNoNode) {
			return nil
		}
		if err != nil {
			return err
		}
		if cstat.Czxid != stat.Czxid || cstat.Mzxid != stat.Mzxid {
			return fmt.Errorf("%s changed while read", p)
		}
		n.Stat = *cstat
		out = append(out, n)
		slices.Sort(names)
		for _, name := range names {
			if err := walk(join(p, name), d+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root, 0); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b Node) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// requireConverges waits until the cache's copy is the server's subtree, paths,
// data and stats.
func requireConverges(t *testing.T, ca *Cache, c *framework.Client, depth int, withData bool) {
	t.Helper()
	last := new(note)
	require.Eventually(t, func() bool {
		want, err := serverTree(c, ca.Path(), depth, withData)
		if err != nil {
			last.s = err.Error()
			return false
		}
		got := ca.Nodes()
		if len(got) != len(want) {
			last.s = fmt.Sprintf("%d nodes, the server has %d", len(got), len(want))
			return false
		}
		for i := range want {
			if !sameNode(got[i], want[i]) {
				last.s = fmt.Sprintf("%s: have %q %+v, the server %q %+v", want[i].Path, got[i].Data, got[i].Stat, want[i].Data, want[i].Stat)
				return false
			}
		}
		return true
	}, wait, 20*time.Millisecond, "the copy never equalled the server's tree: %s", last)
}

func create(t *testing.T, c *framework.Client, p, data string) {
	t.Helper()
	_, err := c.Create(testCtx(t), p, []byte(data))
	require.NoError(t, err)
}

func set(t *testing.T, c *framework.Client, p, data string) {
	t.Helper()
	_, err := c.Set(testCtx(t), p, []byte(data), -1)
	require.NoError(t, err)
}

func del(t *testing.T, c *framework.Client, p string) {
	t.Helper()
	require.NoError(t, c.Delete(testCtx(t), p, -1))
}

// note is a message that a condition fills in, for its failure.
type note struct{ s string }

func (n *note) String() string { return n.s }
