package cache

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// Apache Curator's CuratorCache (through the peer) and ours, both started before
// their path exists, follow the same tree while a writer makes a scripted history
// (zkrtest.History): nested creations, data changes (once to the same bytes),
// deletions, a node deleted and created again in one transaction, one created and
// changed in another, subtrees torn down in one transaction and node by node, the
// whole tree torn down at last. After each step the test waits until the server's
// tree (path, czxid, version, data), Curator's copy, as the peer lists it and as
// its events build it, and ours are the same; at the end each node's events (type,
// czxid, version, data) are the same on both sides: CuratorCache's NODE_CREATED,
// NODE_CHANGED and NODE_DELETED, ours Created, Changed and Deleted. (Waiting after
// each step keeps the events free of timing: a read answers with the newest data,
// so changes faster than reads are told as fewer events, not always the same on
// both sides.) Ours follows the tree on a persistent watch, as Curator's does, and
// on one-shot watches.
func TestCuratorCacheHearsTheSameHistory(t *testing.T) {
	t.Run("persistent watch", func(t *testing.T) { curatorCacheHistory(t) })
	t.Run("one-shot watches", func(t *testing.T) { curatorCacheHistory(t, framework.WithOneShotWatches()) })
}

func curatorCacheHistory(t *testing.T, opts ...framework.Option) {
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	writer := newClient(t, []string{srv.Addr()})
	const root = "/interop/cached"
	create(t, writer, "/interop", "")

	curator := &curatorCache{peer: zkrtest.StartCuratorPeer(t, "cacheevents", srv.Addr(), root)}
	curator.out = curator.peer.Collect()
	curator.out.Wait(t, 0, "READY")
	ours, h := started(t, newClient(t, []string{srv.Addr()}, opts...), root)

	for _, step := range zkrtest.History(root) {
		require.NoError(t, step.Do(ctx, writer), step.Name)
		requireSameCopies(t, step.Name, writer, ours, curator)
	}

	want, odd := curator.heard()
	require.Empty(t, odd, "Curator's peer said what it should not")
	got, odd := oursHeard(h.get())
	require.Empty(t, odd, "our cache heard what a quiet connection does not give")
	requireEveryKind(t, want)
	t.Logf("CuratorCache's events, by node: %q", want)
	paths := map[string]bool{}
	for p := range want {
		paths[p] = true
	}
	for p := range got {
		paths[p] = true
	}
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		require.Equal(t, want[p], got[p], "%s: the events of our cache (right) are not those of CuratorCache (left)", p)
	}
	h.requireClean(t)
}

// curatorCache is the peer running CuratorCache ("cacheevents") and its lines.
type curatorCache struct {
	peer *zkrtest.CuratorPeer
	out  *zkrtest.PeerLines
}

// heard is each node's events as CuratorCache's listener heard them, "CREATED
// czxid version data" (the node after the change, before it for DELETED), and the
// lines that are neither an event, a listing nor READY.
func (cc *curatorCache) heard() (map[string][]string, []string) {
	byNode := map[string][]string{}
	var odd []string
	for _, line := range cc.out.Since(0) {
		f := strings.Split(line, " ") // base64 has no spaces, and empty data is an empty field
		switch {
		case f[0] == "EVENT" && len(f) == 6:
			kind, _ := strings.CutPrefix(f[1], "NODE_")
			byNode[f[2]] = append(byNode[f[2]], kind+" "+strings.Join(f[3:], " "))
		case f[0] == "NODE" || line == "END" || line == "READY":
		default:
			odd = append(odd, line)
		}
	}
	return byNode, odd
}

// built is the copy that CuratorCache's events describe, as treeLines writes it.
func (cc *curatorCache) built() []string {
	nodes := map[string]string{}
	for _, line := range cc.out.Since(0) {
		f := strings.Split(line, " ")
		if f[0] != "EVENT" || len(f) != 6 {
			continue
		}
		if f[1] == "NODE_DELETED" {
			delete(nodes, f[2])
		} else {
			nodes[f[2]] = strings.Join(f[2:], " ")
		}
	}
	return slices.Collect(maps.Values(nodes))
}

// listed is CuratorCache's copy as the peer lists it, as treeLines writes it.
func (cc *curatorCache) listed(t *testing.T) []string {
	t.Helper()
	n := len(cc.out.Since(0))
	cc.peer.Send(t, "dump")
	end := cc.out.Wait(t, n, "END")
	var out []string
	for _, line := range cc.out.Since(n)[:end-n] {
		if node, ok := strings.CutPrefix(line, "NODE "); ok {
			out = append(out, node)
		}
	}
	return out
}

// oursHeard is each node's events as our cache's listener heard them, written as
// the peer writes Curator's, and the events other than Created, Changed, Deleted and
// Initialized.
func oursHeard(evs []Event) (map[string][]string, []string) {
	byNode := map[string][]string{}
	var odd []string
	for _, ev := range evs {
		switch ev.Type {
		case Created:
			byNode[ev.Path] = append(byNode[ev.Path], "CREATED "+nodeFields(ev.New))
		case Changed:
			byNode[ev.Path] = append(byNode[ev.Path], "CHANGED "+nodeFields(ev.New))
		case Deleted:
			byNode[ev.Path] = append(byNode[ev.Path], "DELETED "+nodeFields(ev.Old))
		case Initialized:
		default:
			odd = append(odd, brief([]Event{ev})[0])
		}
	}
	return byNode, odd
}

// nodeFields is a node as the peer writes it after its path: czxid, version, base64
// data.
func nodeFields(n Node) string {
	return fmt.Sprintf("%d %d %s", n.Stat.Czxid, n.Stat.Version, base64.StdEncoding.EncodeToString(n.Data))
}

// requireSameCopies waits until the server's tree at the cache's path, Curator's
// copy (listed and built from its events) and ours are the same.
func requireSameCopies(t *testing.T, step string, c *framework.Client, ours *Cache, curator *curatorCache) {
	t.Helper()
	var server, listed, built, mine []string
	deadline := time.Now().Add(wait)
	for {
		var err error
		server, err = treeLines(c, ours.Path())
		require.NoError(t, err)
		listed, built = curator.listed(t), curator.built()
		mine = mine[:0]
		for _, n := range ours.Nodes() {
			mine = append(mine, n.Path+" "+nodeFields(n))
		}
		for _, s := range [][]string{server, listed, built, mine} {
			slices.Sort(s) // by path: a space sorts before any character of a name
		}
		if slices.Equal(server, listed) && slices.Equal(server, built) && slices.Equal(server, mine) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s, the copies never agreed:\nserver:                %q\nCuratorCache (listed): %q\nCuratorCache (events): %q\nours:                  %q",
				step, server, listed, built, mine)
		}
		time.Sleep(20 * time.Millisecond) // polling a condition; its deadline is wait
	}
}

// treeLines is the server's subtree at root as the peer lists a copy: "path czxid
// version data"; none if root does not exist.
func treeLines(c *framework.Client, root string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	data, stat, err := c.Get(ctx, root)
	if errors.Is(err, framework.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	names, _, err := c.Children(ctx, root)
	if errors.Is(err, framework.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := []string{root + " " + nodeFields(Node{Data: data, Stat: *stat})}
	for _, name := range names {
		sub, err := treeLines(c, join(root, name))
		if err != nil {
			return nil, err
		}
		out = append(out, sub...)
	}
	return out, nil
}

// requireEveryKind checks that the history gave the caches each kind of event, and
// a node deleted and created again, so that agreeing on it means something.
func requireEveryKind(t *testing.T, byNode map[string][]string) {
	t.Helper()
	seen := map[string]bool{}
	for _, evs := range byNode {
		for i, ev := range evs {
			seen[strings.Fields(ev)[0]] = true
			if i > 0 && strings.HasPrefix(evs[i-1], "DELETED") && strings.HasPrefix(ev, "CREATED") {
				seen["again"] = true
			}
		}
	}
	for _, k := range []string{"CREATED", "CHANGED", "DELETED", "again"} {
		require.True(t, seen[k], "no %s among %q", k, byNode)
	}
}
