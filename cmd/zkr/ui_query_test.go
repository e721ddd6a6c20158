package main

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every query parameter of every endpoint is checked: a number that would
// overflow a page's end, a negative, a word, a parameter given twice or one the
// endpoint does not take is a 400 that names it, never a dropped connection; the
// server answers on, and nothing panicked.
func TestUIRefusesBadParameters(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, err := h.client.Create(testCtx(t), "/q", nil)
	require.NoError(t, err)
	u := runUI(t, h, "/")
	const huge = "9223372036854775807"
	for _, tc := range []struct{ target, names string }{
		{"/api/node?path=/q&offset=" + huge + "&limit=10", "offset"},
		{"/api/node?path=/q&offset=10&limit=" + huge, "limit"},
		{"/api/node?path=/q&offset=1000000000", "offset"},
		{"/api/node?path=/q&offset=99999999999999999999999", "offset"},
		{"/api/node?path=/q&offset=-1", "offset"},
		{"/api/node?path=/q&limit=-5", "limit"},
		{"/api/node?path=/q&offset=1e3", "offset"},
		{"/api/node?path=/q&offset=0x10", "offset"},
		{"/api/node?path=/q&offset=", "offset"},
		{"/api/node?path=/q&participants_offset=" + huge, "participants_offset"},
		{"/api/node?path=/q&members_offset=x", "members_offset"},
		{"/api/node?path=/q&items_offset=-2", "items_offset"},
		{"/api/node?path=/q&offset=1&offset=2", "offset given 2 times"},
		{"/api/node?path=/q&path=/", "path given 2 times"},
		{"/api/node?path=/q&ofset=1", `unknown parameter "ofset"`},
		{"/api/node?path=relative", "relative"},
		{"/api/node?path=/q/", "/q/"},
		{"/api/node?path=/q%00x", "path"},
		{"/api/overview?offset=" + huge, "offset"},
		{"/api/overview?limit=-1", "limit"},
		{"/api/overview?path=/q", `unknown parameter "path"`},
		{"/api/status?verbose=1", `unknown parameter "verbose"`},
		{"/api/events?since=3", `unknown parameter "since"`},
	} {
		var e uiError
		u.json(tc.target, http.StatusBadRequest, &e)
		require.Contains(t, e.Error, "zkr ui: bad query", tc.target)
		require.Contains(t, e.Error, tc.names, tc.target)
	}
	for _, target := range []string{"/?x=1", "/assets/app.js?v=2"} {
		a := u.get(u.withToken(target))
		require.Equal(t, http.StatusBadRequest, a.code, target)
		require.Contains(t, string(a.body), "zkr ui: bad query", target)
	}

	// The largest numbers taken: an empty page, not a crash.
	var n apiNode
	u.json("/api/node?path=/q&offset=999999999&limit=999999999&participants_offset=999999999", http.StatusOK, &n)
	require.Empty(t, n.Children.Names)
	var o map[string]json.RawMessage
	u.json("/api/overview?offset=999999999&limit=999999999", http.StatusOK, &o)
	require.NotContains(t, u.p.stderr.String(), "panic")
}
