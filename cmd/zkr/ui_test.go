package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/recipes/cache"
	"github.com/zkrecipes/zkrecipes/recipes/mutex"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// startUI serves zkr ui's handler over a cache of root read through c.
func startUI(t *testing.T, c *framework.Client, root string) *httptest.Server {
	t.Helper()
	ca, err := cache.New(c, root)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ca.Close(context.Background()) })
	s := newUIServer(ca, time.Minute)
	ca.Listen(s.hear)
	require.NoError(t, ca.Start(testCtx(t)))
	hs := httptest.NewServer(s)
	t.Cleanup(func() { s.stop(); hs.Close() })
	return hs
}

// apiNode is /api/node as a test reads it: a queue's recipe decodes into queue.
type apiNode struct {
	Exists     bool       `json:"exists"`
	Connection string     `json:"connection"`
	Data       *blob      `json:"data"`
	Children   uiChildren `json:"children"`
	Recipe     *queue     `json:"recipe"`
}

func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.NoError(t, json.NewDecoder(resp.Body).Decode(v))
	return resp.StatusCode
}

// states lists a queue's participants as "id:state".
func states(n apiNode) string {
	if n.Recipe == nil {
		return ""
	}
	var s []string
	for _, p := range n.Recipe.Participants {
		s = append(s, p.ID+":"+p.State)
	}
	return strings.Join(s, " ")
}

// The API shows a lock's holder and waiter as other clients take it, and the
// hand-over when the holder releases.
func TestUIShowsAQueueAsItMoves(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := testCtx(t)
	hs := startUI(t, h.client, "/")
	node := func() apiNode {
		var n apiNode
		require.Equal(t, http.StatusOK, getJSON(t, hs.URL+"/api/node?path=/l", &n))
		return n
	}

	a, err := mutex.New(zkrtest.Client(t, []string{h.servers}), "/l", mutex.WithID("a"))
	require.NoError(t, err)
	require.NoError(t, a.Acquire(ctx))
	eventually(t, "a holding", func() bool { return states(node()) == "a:holder" })
	b, err := mutex.New(zkrtest.Client(t, []string{h.servers}), "/l", mutex.WithID("b"))
	require.NoError(t, err)
	acquired := make(chan error, 1)
	go func() { acquired <- b.Acquire(ctx) }()
	eventually(t, "b waiting behind a", func() bool { return states(node()) == "a:holder b:waiting" })
	require.Equal(t, "mutex", node().Recipe.Recipe)

	require.NoError(t, a.Release(ctx))
	require.NoError(t, <-acquired)
	eventually(t, "b holding", func() bool { return states(node()) == "b:holder" })
	require.NoError(t, b.Release(ctx))
}

// /api/events tells of a change once the copy has it: a page that reads the
// node after the event sees the change.
func TestUIEventsFollowTheCopy(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := testCtx(t)
	hs := startUI(t, h.client, "/e")

	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(sctx, http.MethodGet, hs.URL+"/api/events", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	events := bufio.NewScanner(resp.Body)
	next := func() uiChange {
		for events.Scan() {
			if data, ok := strings.CutPrefix(events.Text(), "data: "); ok {
				var c uiChange
				require.NoError(t, json.Unmarshal([]byte(data), &c))
				return c
			}
		}
		t.Fatalf("event stream ended: %v", events.Err())
		return uiChange{}
	}
	first := next()
	require.Equal(t, connConnected, first.Connection)

	_, err = h.client.Create(ctx, "/e", []byte("v1"))
	require.NoError(t, err)
	for {
		c := next()
		require.Greater(t, c.Seq, first.Seq)
		var n apiNode
		getJSON(t, hs.URL+"/api/node?path=/e", &n)
		if n.Exists {
			require.Equal(t, "v1", *n.Data.Text)
			break
		}
	}
}

// A node's children come a page at a time; the server refuses every method but
// GET and HEAD, paths outside its root and bad numbers.
func TestUIPagesAndRefuses(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := testCtx(t)
	_, err := h.client.Create(ctx, "/p", nil)
	require.NoError(t, err)
	for i := range 120 {
		_, err := h.client.Create(ctx, fmt.Sprintf("/p/c%03d", i), nil)
		require.NoError(t, err)
	}
	hs := startUI(t, h.client, "/p")

	var n apiNode
	require.Equal(t, http.StatusOK, getJSON(t, hs.URL+"/api/node?path=/p&offset=100&limit=50", &n))
	require.Equal(t, 120, n.Children.Total)
	require.Len(t, n.Children.Names, 20)
	require.Equal(t, "c100", n.Children.Names[0].Name)
	require.Equal(t, http.StatusOK, getJSON(t, hs.URL+"/api/node", &n)) // the root by default
	require.Len(t, n.Children.Names, uiPageDefault)

	for _, q := range []string{"path=/other", "path=/p/", "path=relative", "path=/pq", "offset=-1", "limit=x"} {
		var e uiError
		require.Equal(t, http.StatusBadRequest, getJSON(t, hs.URL+"/api/node?"+q, &e), q)
		require.Contains(t, e.Error, "zkr ui: bad query", q)
	}
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		for _, p := range []string{"/", "/api/node", "/api/events", "/api/status"} {
			req, err := http.NewRequest(m, hs.URL+p, nil)
			require.NoError(t, err)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, m+" "+p)
		}
	}
}

// While the connection to ZooKeeper is cut the API says suspended, and connected
// again once the copy is read again.
func TestUISaysSuspended(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	c := zkrtest.Client(t, []string{proxy.Addr()}, framework.WithSessionTimeout(4*time.Second))
	hs := startUI(t, c, "/")
	status := func() string {
		var s uiStatus
		require.Equal(t, http.StatusOK, getJSON(t, hs.URL+"/api/status", &s))
		return s.Connection
	}
	require.Equal(t, connConnected, status())
	proxy.Cut()
	eventually(t, "suspended", func() bool { return status() == connSuspended })
	var n apiNode
	getJSON(t, hs.URL+"/api/node", &n)
	require.Equal(t, connSuspended, n.Connection)
	proxy.Restore()
	eventually(t, "connected", func() bool { return status() == connConnected })
}

// zkr ui prints its URL once the copy is loaded, serves the page with a policy
// that allows no inline script, says so when it listens beyond loopback, and
// ends with 0 on SIGTERM.
func TestUICommand(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	u := h.start("ui", "/", "--listen", "127.0.0.1:0")
	eventually(t, "the URL", func() bool { return strings.HasSuffix(u.stdout.String(), "\n") })
	url := strings.TrimSpace(u.stdout.String())
	require.Regexp(t, `^http://127\.0\.0\.1:[0-9]+/\?token=[A-Z2-7]{26}$`, url)
	resp, err := http.Get(url)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, resp.Header.Get("Content-Type"), "text/html")
	require.Contains(t, resp.Header.Get("Content-Security-Policy"), "script-src 'self'")
	u.signal(syscall.SIGTERM)
	require.Equal(t, 0, u.wait())
	require.Empty(t, u.stderr.String())

	wide := h.start("ui", "--listen", "0.0.0.0:0")
	eventually(t, "the URL", func() bool { return strings.HasSuffix(wide.stdout.String(), "\n") })
	require.Contains(t, wide.stderr.String(), "not loopback")
	wide.signal(syscall.SIGINT)
	require.Equal(t, 0, wide.wait())

	for _, bad := range [][]string{{"ui", "/a", "/b"}, {"ui", "a"}, {"ui", "--hold-warn", "0"}, {"ui", "--listen", "nocolon"}, {"ui", "/", "--", "true"}} {
		code, _, stderr := runZkr(t, []string{"ZK_SERVERS=" + h.servers}, bad...)
		require.Equal(t, exitUsage, code, "%v: %s", bad, stderr)
	}
}

// The connection the page shows follows the cache's events: suspended and lost
// until synced; every event wakes the event streams.
func TestUIConnectionFollowsTheCache(t *testing.T) {
	t.Parallel()
	s := newUIServer(nil, time.Minute) // hear reads no cache
	wake := make(chan struct{}, 1)
	s.subs[wake] = struct{}{}
	for i, step := range []struct {
		event cache.EventType
		want  string
	}{
		{cache.Created, connConnected},
		{cache.Suspended, connSuspended},
		{cache.Changed, connSuspended}, // a change read before Synced does not make the copy current
		{cache.Synced, connConnected},
		{cache.Lost, connLost},
		{cache.Created, connLost},
		{cache.Synced, connConnected},
	} {
		s.hear(cache.Event{Type: step.event})
		seq, conn := s.state()
		require.Equal(t, uint64(i+1), seq)
		require.Equal(t, step.want, conn, "after %v", step.event)
		select {
		case <-wake:
		default:
			t.Fatalf("no wake-up after %v", step.event)
		}
	}
}

// A node whose children fit no recipe's layout (persistent children: no queue, no
// group) is shown as a node, with no recipe: the page draws its stat and children.
func TestUIPlainNodeHasNoRecipe(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := testCtx(t)
	_, err := h.client.Create(ctx, "/plain/child", []byte("x"), framework.CreatingParents())
	require.NoError(t, err)
	hs := startUI(t, h.client, "/")
	var n apiNode
	eventually(t, "/plain's child in the copy", func() bool {
		require.Equal(t, http.StatusOK, getJSON(t, hs.URL+"/api/node?path=/plain", &n))
		return n.Children.Total == 1
	})
	raw := map[string]json.RawMessage{}
	require.Equal(t, http.StatusOK, getJSON(t, hs.URL+"/api/node?path=/plain", &raw))
	require.Equal(t, "null", string(raw["recipe"]))
}

// zkr ui shows a node's stat in the one schema zkr stat --json and get --json use:
// the same field names and values (zxids in decimal, the session in hex).
func TestUIStatIsZkrStat(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := testCtx(t)
	_, err := h.client.Create(ctx, "/same", []byte("x"), framework.Ephemeral())
	require.NoError(t, err)
	hs := startUI(t, h.client, "/")
	var raw map[string]json.RawMessage
	eventually(t, "/same in the copy", func() bool {
		raw = map[string]json.RawMessage{}
		require.Equal(t, http.StatusOK, getJSON(t, hs.URL+"/api/node?path=/same", &raw))
		return string(raw["exists"]) == "true"
	})
	var ui map[string]any
	require.NoError(t, json.Unmarshal(raw["stat"], &ui))

	code, stdout, stderr := runZkr(t, []string{"ZK_SERVERS=" + h.servers}, "stat", "--json", "/same")
	require.Equal(t, 0, code, stderr)
	var cli map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &cli))
	require.Equal(t, cli, ui)
	require.Equal(t, fmt.Sprintf("%#x", h.client.SessionID()), ui["ephemeral_owner"])

	code, stdout, stderr = runZkr(t, []string{"ZK_SERVERS=" + h.servers}, "get", "--json", "/same")
	require.Equal(t, 0, code, stderr)
	var get struct {
		Stat map[string]any `json:"stat"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &get))
	require.Equal(t, cli, get.Stat)
}
