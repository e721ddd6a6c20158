package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/recipes/election"
	"github.com/zkrecipes/zkrecipes/recipes/group"
	"github.com/zkrecipes/zkrecipes/recipes/partition"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// Piped, --watch prints one line per change of the queue, as other clients take
// and leave it, and ends with 0 on SIGTERM.
func TestInspectWatchLines(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	w := h.start("inspect", "/w", "--watch")
	waitOutput(t, &w.stdout, " /w: no such node\n")

	a := h.start("lock", "/w", "--id", "a")
	waitOutput(t, &w.stdout, " /w: mutex, holding: lock a (token ")
	b := h.start("lock", "/w", "--id", "b", "--", "true")
	waitOutput(t, &w.stdout, "; waiting: lock b\n")
	a.signal(syscall.SIGTERM)
	require.Equal(t, 0, a.wait())
	require.Equal(t, 0, b.wait())
	eventually(t, "the watch to see the lock free", func() bool {
		// The lock's parent is an empty container, which the server deletes in time.
		out := w.stdout.String()
		return (strings.HasSuffix(out, " /w: no participants\n") || strings.HasSuffix(out, " /w: no such node\n")) && len(watchLines(w)) >= 4
	})

	w.signal(syscall.SIGTERM)
	require.Equal(t, 0, w.wait())
	lines := watchLines(w)
	// Every line is a change: none repeats the one before it.
	for i, line := range lines {
		stamp, rest, ok := strings.Cut(line, " ")
		require.True(t, ok, line)
		_, err := time.Parse("2006-01-02T15:04:05.000Z", stamp)
		require.NoError(t, err, line)
		if i > 0 {
			_, before, _ := strings.Cut(lines[i-1], " ")
			require.NotEqual(t, before, rest)
		}
	}
	require.Contains(t, lines[0], "/w: no such node")
}

// With --json, --watch prints one JSON object per change; a group member that
// another client adds, changes and removes shows up, and --for ends the watch.
func TestInspectWatchJSON(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := zkrtest.Context(t)
	w := h.start("inspect", "/g", "--watch", "--json", "--as", "group", "--for", "10m")
	waitOutput(t, &w.stdout, `"event":"change"`)

	m, err := group.New(zkrtest.Client(t, []string{h.servers}), "/g", "m1", []byte("first"))
	require.NoError(t, err)
	require.NoError(t, m.Start(ctx))
	waitOutput(t, &w.stdout, `"payload":{"text":"first"}`)
	require.NoError(t, m.SetPayload(ctx, []byte("second")))
	waitOutput(t, &w.stdout, `"payload":{"text":"second"}`)
	require.NoError(t, m.Close(ctx))
	eventually(t, "the member gone", func() bool {
		l := watchLines(w)
		return len(l) > 0 && strings.Contains(l[len(l)-1], `"members":[]`)
	})
	w.signal(syscall.SIGINT)
	require.Equal(t, 0, w.wait())

	var seen []string
	for _, line := range watchLines(w) {
		var got struct {
			Time  time.Time `json:"time"`
			Event string    `json:"event"`
			View  groupView `json:"view"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &got), line)
		require.Equal(t, "change", got.Event)
		require.False(t, got.Time.IsZero())
		require.Equal(t, "group", got.View.Recipe)
		payloads := ""
		for _, m := range got.View.Members {
			payloads += m.ID + "=" + *m.Payload.Text
		}
		seen = append(seen, payloads)
	}
	require.Equal(t, []string{"", "m1=first", "m1=second", ""}, seen)

	// --for ends a watch by itself, with 0. Its time counts from the start, connection
	// and load included, so it is long enough for those on busy cores (100ms was not,
	// under -race with the package's parallel tests).
	code, stdout, stderr := runZkr(t, []string{"ZK_SERVERS=" + h.servers}, "inspect", "/g", "--watch", "--for", "2s")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, "/g: no (participants|such node)", stdout) // the empty container may be gone
}

// A session loss is reported, and the watch goes on in the new session: a change
// made meanwhile shows up after it.
func TestInspectWatchSessionLoss(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := zkrtest.Context(t)
	proxy := zktest.NewProxy(t, h.srv.Addr())
	w := startZkr(t, nil, "--servers", proxy.Addr(), "--session-timeout", "2s", "inspect", "/n", "--watch", "--as", "counter")
	waitOutput(t, &w.stdout, " /n: no such node\n")

	done := make(chan error, 1)
	go func() { done <- proxy.ExpireSession(context.Background(), 2*time.Second) }()
	_, err := h.client.Create(ctx, "/n", []byte{0, 0, 0, 0, 0, 0, 0, 42})
	require.NoError(t, err)
	require.NoError(t, <-done)
	waitOutput(t, &w.stdout, " /n: session lost: ZooKeeper ended our session")
	waitOutput(t, &w.stdout, " /n: synced: the view is current again\n")
	waitOutput(t, &w.stdout, " /n: counter 42\n")

	// A node that no longer fits --as is said, and the watch goes on.
	_, err = h.client.Set(ctx, "/n", []byte("xyz"), -1)
	require.NoError(t, err)
	waitOutput(t, &w.stdout, " /n holds 3 bytes, not the 8 of a counter\n")
	w.signal(syscall.SIGTERM)
	require.Equal(t, 0, w.wait())
}

// watchLines are the complete lines a watch has printed.
func watchLines(p *proc) []string {
	out := p.stdout.String()
	out = out[:strings.LastIndexByte(out, '\n')+1]
	if out == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(out, "\n"), "\n")
}

// --watch follows who leads an election and who owns a partition's items, one line
// per change.
func TestInspectWatchLeadersAndItems(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := zkrtest.Context(t)
	e := h.start("inspect", "/e", "--watch")
	p := h.start("inspect", "/p", "--watch")
	waitOutput(t, &e.stdout, " /e: no such node\n")
	waitOutput(t, &p.stdout, " /p: no such node\n")

	first, err := election.NewLatch(zkrtest.Client(t, []string{h.servers}), "/e", election.WithID("first"))
	require.NoError(t, err)
	require.NoError(t, first.Start(ctx))
	require.NoError(t, first.Await(ctx))
	waitOutput(t, &e.stdout, " /e: latch, holding: latch first (token ")
	second, err := election.NewLatch(zkrtest.Client(t, []string{h.servers}), "/e", election.WithID("second"))
	require.NoError(t, err)
	require.NoError(t, second.Start(ctx))
	waitOutput(t, &e.stdout, "; waiting: latch second\n")
	require.NoError(t, first.Close(ctx))
	require.NoError(t, second.Await(ctx))
	waitOutput(t, &e.stdout, " /e: latch, holding: latch second (token ")
	require.NoError(t, second.Close(ctx))

	part, err := partition.New(zkrtest.Client(t, []string{h.servers}), "/p",
		func(ctx context.Context, _ partition.Item) error { <-ctx.Done(); return nil },
		partition.WithID("r1"), partition.Items("x", "y"))
	require.NoError(t, err)
	require.NoError(t, part.Start(ctx))
	eventually(t, "both items owned", func() bool {
		l := watchLines(p)
		return len(l) > 0 && regexp.MustCompile(`/p: partition, members r1; items x r1 \(token \d+, 0 waiting\), y r1 \(token \d+, 0 waiting\)$`).MatchString(l[len(l)-1])
	})
	require.NoError(t, part.Close(ctx))
	eventually(t, "the items without an owner", func() bool {
		l := watchLines(p)
		return len(l) > 0 && strings.HasSuffix(l[len(l)-1], "/p: partition, members ; items x - (token 0, 0 waiting), y - (token 0, 0 waiting)")
	})

	for _, w := range []*proc{e, p} {
		w.signal(syscall.SIGTERM)
		require.Equal(t, 0, w.wait())
	}
}
