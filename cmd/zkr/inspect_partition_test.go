package main

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/recipes/partition"
)

// inspect shows a partition's members and each item's owner.
func TestInspectPartition(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := zkrtest.Context(t)
	items := []string{"billing", "emails", "exports"}
	members := map[string]*partition.Partitioner{}
	for _, id := range []string{"r1", "r2"} {
		p, err := partition.New(zkrtest.Client(t, []string{h.servers}), "/scheduler",
			func(ctx context.Context, _ partition.Item) error { <-ctx.Done(); return nil },
			partition.WithID(id), partition.Items(items...))
		require.NoError(t, err)
		require.NoError(t, p.Start(ctx))
		t.Cleanup(func() { _ = p.Close(context.Background()) })
		members[id] = p
	}
	// who is item -> owner as the members themselves say it.
	who := func() map[string]string {
		m := map[string]string{}
		for id, p := range members {
			for _, it := range p.Owned() {
				m[it] = id
			}
		}
		return m
	}
	// Both hold their shares, 2 and 1, and inspect shows each item's owner as the
	// members' Owned say it.
	var q queue
	require.Eventually(t, func() bool {
		code, stdout, _ := runZkr(t, []string{"ZK_SERVERS=" + h.servers}, "inspect", "/scheduler", "--json")
		q = queue{}
		if code != 0 || json.Unmarshal([]byte(stdout), &q) != nil || len(q.Items) != 3 {
			return false
		}
		shown := map[string]string{}
		for _, it := range q.Items {
			shown[it.Name] = it.Owner
		}
		return maps.Equal(shown, who())
	}, zkrtest.Wait, 100*time.Millisecond)
	require.Equal(t, "partition", q.Recipe)
	require.Equal(t, []string{"r1", "r2"}, q.Members)
	count := map[string]int{}
	for i, it := range q.Items {
		require.Equal(t, items[i], it.Name)
		require.Positive(t, it.FencingToken)
		require.Zero(t, it.Waiting)
		count[it.Owner]++
	}
	require.ElementsMatch(t, []int{1, 2}, []int{count["r1"], count["r2"]})

	code, stdout, stderr := runZkr(t, []string{"ZK_SERVERS=" + h.servers}, "inspect", "/scheduler")
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Equal(t, "/scheduler: partition, 2 members (r1, r2), 3 items with an owner or a queue", lines[0])
	require.Equal(t, []string{"ITEM", "OWNER", "TOKEN", "WAITING"}, strings.Fields(lines[1]))
	for i, it := range q.Items {
		require.Equal(t, []string{it.Name, it.Owner}, strings.Fields(lines[2+i])[:2])
	}
}
