package main

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// zkr ui answers only the host names it listens on, and only with this run's
// token: a page of another site that rebinds its name to 127.0.0.1 (and so sends
// its own name as Host) reads nothing, even with the token; a request without
// the token, or with another, reads nothing either. The printed URL opens the page
// and leaves the token in an HttpOnly, SameSite=Strict cookie, with which the
// page's API calls need no token in their URL.
func TestUIAnswersOnlyItsHostsWithTheToken(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, err := h.client.Create(testCtx(t), "/secret", []byte("s3cret"))
	require.NoError(t, err)
	u := runUI(t, h)
	_, port, err := net.SplitHostPort(u.addr)
	require.NoError(t, err)
	eventually(t, "/secret in the copy", func() bool {
		return u.get(u.withToken("/api/node?path=/secret")).code == http.StatusOK &&
			strings.Contains(string(u.get(u.withToken("/api/node?path=/secret")).body), "s3cret")
	})

	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "LocalHost:" + port, "127.0.0.1", "localhost"} {
		a := u.get(u.withToken("/api/node?path=/secret"), "Host", host)
		require.Equal(t, http.StatusOK, a.code, "Host %s: %s", host, a.body)
	}
	for _, host := range []string{"evil.example:" + port, "evil.example", "localhost.evil.example:" + port, "127.0.0.1.nip.io:" + port} {
		for _, target := range []string{"/api/node?path=/secret", "/api/status", "/api/overview", "/api/events", "/", "/assets/app.js"} {
			a := u.get(u.withToken(target), "Host", host)
			require.Equal(t, http.StatusMisdirectedRequest, a.code, "Host %q %s: %s", host, target, a.body)
			require.Contains(t, string(a.body), "does not answer for host", target)
			require.NotContains(t, string(a.body), "s3cret")
		}
	}
	require.Len(t, u.token, 26, u.url)
	for _, target := range []string{"/api/node?path=/secret", "/api/status", "/api/overview", "/api/events", "/", "/assets/app.js"} {
		for _, with := range []string{target, u.withToken(target)[:len(u.withToken(target))-1], strings.Replace(u.withToken(target), u.token, strings.ToLower(u.token), 1)} {
			a := u.get(with)
			require.Equal(t, http.StatusForbidden, a.code, "%s: %s", with, a.body)
			require.Contains(t, string(a.body), "needs the token", with)
			require.NotContains(t, string(a.body), "s3cret")
		}
		// A cookie of another run (or another port) is no token either.
		a := u.get(target, "Cookie", "zkr_ui_"+port+"=WRONG; zkr_ui_1="+u.token)
		require.Equal(t, http.StatusForbidden, a.code, target)
	}
	var e uiError
	require.NoError(t, json.Unmarshal(u.get("/api/status").body, &e), "the API refuses in JSON")
	require.Contains(t, e.Error, "zkr ui: this needs the token")

	// The printed URL, as a browser opens it: the page, and a cookie for the rest.
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	browser := &http.Client{Jar: jar}
	resp, err := browser.Get(u.url)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, resp.Header.Get("Content-Type"), "text/html")
	cookie := resp.Header.Get("Set-Cookie")
	require.Contains(t, cookie, "zkr_ui_"+port+"="+u.token)
	require.Contains(t, cookie, "HttpOnly")
	require.Contains(t, cookie, "SameSite=Strict")
	resp, err = browser.Get("http://" + u.addr + "/api/node?path=/secret")
	require.NoError(t, err)
	var n apiNode
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&n))
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "s3cret", *n.Data.Text)
}

// Listening on every interface, zkr ui answers IP addresses (no name to rebind)
// and loopback names, still not another site's name, and still wants the token.
func TestUIOnEveryInterfaceAnswersAddresses(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	u := runUI(t, h, "--listen", "0.0.0.0:0")
	require.Contains(t, u.p.stderr.String(), "not loopback")
	_, port, err := net.SplitHostPort(u.addr)
	require.NoError(t, err)
	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "192.0.2.7:" + port, "[2001:db8::7]:" + port} {
		a := u.get(u.withToken("/api/status"), "Host", host)
		require.Equal(t, http.StatusOK, a.code, "Host %s: %s", host, a.body)
	}
	require.Equal(t, http.StatusMisdirectedRequest, u.get(u.withToken("/api/status"), "Host", "evil.example:"+port).code)
	require.Equal(t, http.StatusForbidden, u.get("/api/status").code)
}
