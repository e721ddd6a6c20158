package integration

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// Apache Curator's PersistentWatcher (through the peer) and our AddWatch, of each
// mode on one path, hear the same notifications, type and path, in the same order,
// while a writer makes a scripted history of the tree (zkrtest.History): nested
// creations, data changes, deletions, a node deleted and created again in one
// transaction, subtrees torn down. (Zxids are not compared: Curator's watchers get
// none, -1 even from ZooKeeper 3.9's client.) Ours are set both on a client of their
// own, one per mode, and on one client with both modes on the path, whose one
// server watch is recursive and whose persistent watch's child events the
// framework makes up: each hears what Curator's watch of its mode hears.
func TestCuratorPersistentWatcherHearsWhatAddWatchHears(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	writer := newClient(t, []string{srv.Addr()})
	const root = "/interop/watched"
	_, err := writer.Create(ctx, "/interop", nil)
	require.NoError(t, err)

	modes := []struct {
		name string
		mode framework.WatchMode
	}{{"persistent", framework.WatchPersistent}, {"recursive", framework.WatchPersistentRecursive}}
	curator := map[string]*zkrtest.PeerLines{}
	for _, m := range modes {
		lines := zkrtest.StartCuratorPeer(t, "watch", srv.Addr(), root, m.name).Collect()
		lines.Wait(t, 0, "READY")
		curator[m.name] = lines
	}
	shared := newClient(t, []string{srv.Addr()})
	ours := map[string]*heardWatch{}
	for _, m := range modes {
		ours["own client, "+m.name] = hearWatch(t, newClient(t, []string{srv.Addr()}), root, m.mode)
		ours["shared client, "+m.name] = hearWatch(t, shared, root, m.mode)
	}

	for _, step := range zkrtest.History(root) {
		require.NoError(t, step.Do(ctx, writer), step.Name)
	}

	// The root's deletion is the history's last change, heard by every mode.
	last := "NodeDeleted " + root
	for name, lines := range curator {
		waitLast(t, "Curator's "+name+" watch", last, func() []string { evs, _ := curatorHeard(lines); return evs })
	}
	for name, w := range ours {
		waitLast(t, name, last, w.kinds)
	}

	for _, m := range modes {
		want, odd := curatorHeard(curator[m.name])
		require.Empty(t, odd, "Curator's %s watch: the connection dropped, or the peer failed", m.name)
		requireSeveralKinds(t, m.name, m.mode, want)
		t.Logf("%s: %d notifications: %q", m.name, len(want), want)
		for _, side := range []string{"own client, ", "shared client, "} {
			got := ours[side+m.name]
			require.Equal(t, want, got.kinds(), "%s%s: what AddWatch heard (right) is not what Curator's PersistentWatcher heard (left)", side, m.name)
			require.Zero(t, got.resets(), "%s%s: the watch was reset: the connection dropped", side, m.name)
		}
	}
}

// waitLast waits until heard's last notification is last.
func waitLast(t *testing.T, who, last string, heard func() []string) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for evs := heard(); len(evs) == 0 || evs[len(evs)-1] != last; evs = heard() {
		if time.Now().After(deadline) {
			t.Fatalf("%s never heard %s: %q", who, last, evs)
		}
		time.Sleep(5 * time.Millisecond) // polling a condition; its deadline is wait
	}
}

// curatorHeard is what the peer's PersistentWatcher heard, and the lines that say
// the connection dropped (a connection event other than SyncConnected) or the peer
// failed. A RESET alone is no drop: PersistentWatcher sets its watch again when it
// hears the client connected, which may come after its first setting.
func curatorHeard(lines *zkrtest.PeerLines) (evs, odd []string) {
	for _, line := range lines.Since(0) {
		f := strings.Fields(line)
		switch {
		case len(f) == 4 && f[0] == "WATCHED":
			evs = append(evs, f[1]+" "+f[2])
		case line == "READY" || line == "RESET" || line == "WATCHED None SyncConnected":
		default:
			odd = append(odd, line)
		}
	}
	return evs, odd
}

// requireSeveralKinds checks that the history gave mode's watch each kind of event
// it can hear, so that agreeing on it means something.
func requireSeveralKinds(t *testing.T, name string, mode framework.WatchMode, evs []string) {
	t.Helper()
	seen := map[string]bool{}
	for _, ev := range evs {
		seen[strings.Fields(ev)[0]] = true
	}
	want := []string{"NodeCreated", "NodeDeleted", "NodeDataChanged"}
	if mode == framework.WatchPersistent {
		want = append(want, "NodeChildrenChanged")
	} else {
		require.False(t, seen["NodeChildrenChanged"], "%s: a recursive watch heard a child event", name)
	}
	for _, k := range want {
		require.True(t, seen[k], "%s: no %s in %q", name, k, evs)
	}
}

// heardWatch is what one of our persistent watches heard, collected by a goroutine
// that ends with the watch.
type heardWatch struct {
	mu    sync.Mutex
	evs   []string // "NodeCreated /path"
	reset int
}

func hearWatch(t *testing.T, c *framework.Client, path string, mode framework.WatchMode) *heardWatch {
	t.Helper()
	w, err := c.AddWatch(testCtx(t), path, mode)
	require.NoError(t, err)
	h := &heardWatch{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.Events() {
			h.mu.Lock()
			if ev.Reset {
				h.reset++
			} else {
				h.evs = append(h.evs, strings.TrimPrefix(ev.Type.String(), "Event")+" "+ev.Path)
			}
			h.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		_ = w.Close(ctx)
		<-done
	})
	return h
}

func (h *heardWatch) kinds() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.evs)
}

func (h *heardWatch) resets() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.reset
}
