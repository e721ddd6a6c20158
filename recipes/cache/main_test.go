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

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

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
	t.Cleanup(func() { _ = ca.Close() })
	require.NoError(t, ca.Start(testCtx(t)))
	h.requireClean(t)
	return ca, h
}

// history records a listener's events and checks each against a model of what the
// listener was told: no Changed or Deleted of a node it was not told exists, no
// Created twice without a Deleted between, no version going back, no node of a
// deleted incarnation coming back, parents created before and deleted after their
// children, and Old always what it was last told.
type history struct {
	mu         sync.Mutex
	root       string
	events     []Event
	live       map[string]Node
	gone       map[int64]bool // czxids of incarnations deleted
	violations []string
	// written, if set, holds every (path, czxid-less version) data a writer wrote:
	// a reported node must carry data somebody wrote with that version.
	written func(n Node) bool
}

func record(ca *Cache) *history {
	h := &history{root: ca.Path(), live: map[string]Node{}, gone: map[int64]bool{}}
	ca.Listen(h.hear)
	return h
}

func (h *history) hear(ev Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, ev)
	bad := func(format string, args ...any) {
		h.violations = append(h.violations, fmt.Sprintf("event %d %v %s: ", len(h.events)-1, ev.Type, ev.Path)+fmt.Sprintf(format, args...))
	}
	old, known := h.live[ev.Path]
	switch ev.Type {
	case Created:
		if known {
			bad("created twice")
		}
		if ev.Path != h.root {
			if _, ok := h.live[parentOf(ev.Path)]; !ok {
				bad("created before its parent")
			}
		}
		if h.gone[ev.New.Stat.Czxid] {
			bad("an incarnation deleted before (czxid %d) came back", ev.New.Stat.Czxid)
		}
		if ev.New.Path != ev.Path {
			bad("New.Path %q", ev.New.Path)
		}
		h.checkWritten(ev.New, bad)
		h.live[ev.Path] = ev.New
	case Changed:
		switch {
		case !known:
			bad("changed, never created")
		case !sameData(old, ev.Old):
			bad("Old %+v is not what was said before, %+v", ev.Old.Stat, old.Stat)
		case ev.New.Stat.Czxid != old.Stat.Czxid:
			bad("changed into another incarnation")
		case ev.New.Stat.Version <= old.Stat.Version || ev.New.Stat.Mzxid <= old.Stat.Mzxid:
			bad("version %d after %d", ev.New.Stat.Version, old.Stat.Version)
		}
		h.checkWritten(ev.New, bad)
		h.live[ev.Path] = ev.New
	case Deleted:
		if !known {
			bad("deleted, never created")
		} else if !sameData(old, ev.Old) {
			bad("Old %+v is not what was said before, %+v", ev.Old.Stat, old.Stat)
		}
		for p := range h.live {
			if strings.HasPrefix(p, ev.Path+"/") || (ev.Path == "/" && p != "/") {
				bad("deleted before its child %s", p)
			}
		}
		h.gone[old.Stat.Czxid] = true
		delete(h.live, ev.Path)
	}
}

func (h *history) checkWritten(n Node, bad func(string, ...any)) {
	if h.written != nil && !h.written(n) {
		bad("data %q at version %d was never written", n.Data, n.Stat.Version)
	}
}

func sameNode(a, b Node) bool {
	return a.Path == b.Path && bytes.Equal(a.Data, b.Data) && a.Stat == b.Stat
}

// sameData compares what events promise about a node: its data and the stat fields
// that data changes move. (The child fields of a stat change silently, with each
// listing.)
func sameData(a, b Node) bool {
	return a.Path == b.Path && bytes.Equal(a.Data, b.Data) &&
		a.Stat.Czxid == b.Stat.Czxid && a.Stat.Mzxid == b.Stat.Mzxid && a.Stat.Version == b.Stat.Version
}

func parentOf(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

func (h *history) requireClean(t *testing.T) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	require.Empty(t, h.violations, "impossible history")
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
	require.Eventually(t, func() bool { return len(h.since(n)) >= len(want) }, wait, 5*time.Millisecond,
		"waiting for %v, heard %v", want, brief(h.since(n)))
	require.Equal(t, want, brief(h.since(n)))
	h.requireClean(t)
}

// waitEventsUnordered is waitEvents for events whose order among themselves is
// free (the model still checks parents before children).
func (h *history) waitEventsUnordered(t *testing.T, n int, want ...string) {
	t.Helper()
	require.Eventually(t, func() bool { return len(h.since(n)) >= len(want) }, wait, 5*time.Millisecond,
		"waiting for %v, heard %v", want, brief(h.since(n)))
	require.ElementsMatch(t, want, brief(h.since(n)))
	h.requireClean(t)
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
		if errors.Is(err, zk.ErrNoNode) {
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
		if errors.Is(err, zk.ErrNoNode) {
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
