package main

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/recipes/counter"
	"github.com/zkrecipes/zkrecipes/recipes/group"
	"github.com/zkrecipes/zkrecipes/recipes/shared"
)

// inspect shows a group's members, id -> payload, told by their layout or by --as.
func TestInspectGroup(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := zkrtest.Context(t)
	for id, payload := range map[string]string{"w1": "10.0.0.1:8080", "w2": "10.0.0.2:8080"} {
		m, err := group.New(zkrtest.Client(t, []string{h.servers}), "/workers", id, []byte(payload))
		require.NoError(t, err)
		require.NoError(t, m.Start(ctx))
		t.Cleanup(func() { _ = m.Close(context.Background()) })
	}
	env := []string{"ZK_SERVERS=" + h.servers}
	for _, as := range [][]string{nil, {"--as", "group"}} {
		code, stdout, stderr := runZkr(t, env, append([]string{"inspect", "/workers", "--json"}, as...)...)
		require.Equal(t, 0, code, stderr)
		var g groupView
		require.NoError(t, json.Unmarshal([]byte(stdout), &g), stdout)
		require.Equal(t, "group", g.Recipe)
		require.Len(t, g.Members, 2)
		for i, id := range []string{"w1", "w2"} {
			require.Equal(t, id, g.Members[i].ID)
			require.Equal(t, "10.0.0."+id[1:]+":8080", *g.Members[i].Payload.Text)
			require.True(t, strings.HasPrefix(g.Members[i].Session, "0x"))
		}
	}
	code, stdout, stderr := runZkr(t, env, "inspect", "/workers")
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Equal(t, "/workers: group, 2 members", lines[0])
	require.Equal(t, []string{"ID", "PAYLOAD", "SESSION", "AGE"}, strings.Fields(lines[1]))
	require.Equal(t, []string{"w1", `"10.0.0.1:8080"`}, strings.Fields(lines[2])[:2])
	require.Equal(t, []string{"w2", `"10.0.0.2:8080"`}, strings.Fields(lines[3])[:2])
}

// inspect reads a node as a shared count (4 bytes), a counter (8) or a shared value
// (anything else), says when it told which by the length alone, and refuses an
// --as the data does not fit.
func TestInspectValues(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := zkrtest.Context(t)
	minusSeven := int32(-7)
	count := binary.BigEndian.AppendUint32(nil, uint32(minusSeven))
	counter := binary.BigEndian.AppendUint64(nil, 1<<40)
	for p, data := range map[string][]byte{"/count": count, "/counter": counter, "/value": []byte("hello"), "/raw": {0xff, 0xfe, 0x00}} {
		_, err := h.client.Create(ctx, p, data)
		require.NoError(t, err)
	}
	_, err := h.client.Set(ctx, "/count", count, 0) // version 1
	require.NoError(t, err)
	env := []string{"ZK_SERVERS=" + h.servers}
	inspect := func(args ...string) (int, valueView, string) {
		t.Helper()
		code, stdout, stderr := runZkr(t, env, append([]string{"inspect", "--json"}, args...)...)
		var v valueView
		if code == 0 {
			require.NoError(t, json.Unmarshal([]byte(stdout), &v), stdout)
		}
		return code, v, stderr
	}
	number := func(v valueView) int64 { require.NotNil(t, v.Number); return *v.Number }

	code, v, stderr := inspect("/count")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "count", v.Recipe)
	require.True(t, v.Inferred)
	require.Equal(t, int64(-7), number(v))
	require.Equal(t, int32(1), v.Version)

	code, v, stderr = inspect("/counter", "--as", "counter")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "counter", v.Recipe)
	require.False(t, v.Inferred)
	require.Equal(t, int64(1<<40), number(v))

	code, v, stderr = inspect("/count", "--as", "value")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "value", v.Recipe)
	require.Nil(t, v.Number)
	require.Equal(t, base64.StdEncoding.EncodeToString(count), v.Data.Base64) // not UTF-8

	code, v, stderr = inspect("/raw")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "value", v.Recipe)
	require.Nil(t, v.Data.Text)
	require.Equal(t, "//4A", v.Data.Base64)

	code, _, stderr = inspect("/missing", "--as", "count")
	require.Equal(t, exitNoNode, code)
	require.Contains(t, stderr, "/missing: no such node")

	code, _, stderr = inspect("/value", "--as", "count")
	require.Equal(t, exitData, code)
	require.Contains(t, stderr, "/value holds 5 bytes, not the 4 of a shared count")

	for args, want := range map[string]string{
		"/count":                 "/count: shared count -7, version 1 (told by its length; --as value shows the bytes: ",
		"/counter --as counter":  "/counter: counter 1099511627776\n",
		"/value":                 "/value: shared value \"hello\", version 0\n",
		"/raw":                   "/raw: shared value 0xfffe00, version 0\n",
		"/counter --as whatever": "",
	} {
		code, stdout, stderr := runZkr(t, env, append([]string{"inspect"}, strings.Fields(args)...)...)
		if want == "" {
			require.Equal(t, exitUsage, code)
			require.Contains(t, stderr, "--as wants one of group, value, count, counter")
			continue
		}
		require.Equal(t, 0, code, stderr)
		require.True(t, strings.HasPrefix(stdout, want), stdout)
	}
}

// The recipes' own nodes: a shared count, a shared value and a counter, as
// zkrecipes (and so Curator) writes them; a watch follows the count as it is set.
func TestInspectSharedAndCounter(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := zkrtest.Context(t)
	c := zkrtest.Client(t, []string{h.servers})
	count, err := shared.NewCount(c, "/limits/workers", 5)
	require.NoError(t, err)
	require.NoError(t, count.Start(ctx))
	t.Cleanup(func() { _ = count.Close(context.Background()) })
	value, err := shared.NewValue(c, "/config/colour", []byte("blue"))
	require.NoError(t, err)
	require.NoError(t, value.Start(ctx))
	t.Cleanup(func() { _ = value.Close(context.Background()) })
	ids, err := counter.New(c, "/ids/next")
	require.NoError(t, err)
	for range 2 {
		_, err := ids.Add(ctx, 3)
		require.NoError(t, err)
	}

	env := []string{"ZK_SERVERS=" + h.servers}
	w := h.start("inspect", "/limits/workers", "--watch", "--as", "count")
	waitOutput(t, &w.stdout, " /limits/workers: shared count 5, version 0\n")
	require.NoError(t, count.Set(ctx, 9))
	waitOutput(t, &w.stdout, " /limits/workers: shared count 9, version 1\n")
	w.signal(syscall.SIGTERM)
	require.Equal(t, 0, w.wait())

	for args, want := range map[string]string{
		"/limits/workers":                   "/limits/workers: shared count 9, version 1 (told by its length",
		"/config/colour --as value":         "/config/colour: shared value \"blue\", version 0\n",
		"/ids/next":                         "/ids/next: counter 6 (told by its length",
		"/ids/next --as counter --json":     `"number": 6`,
		"/limits/workers --as count --json": `"inferred": false`,
	} {
		code, stdout, stderr := runZkr(t, env, append([]string{"inspect"}, strings.Fields(args)...)...)
		require.Equal(t, 0, code, stderr)
		if strings.HasPrefix(want, `"`) {
			require.Contains(t, stdout, want)
			continue
		}
		require.True(t, strings.HasPrefix(stdout, want), stdout)
	}
}
