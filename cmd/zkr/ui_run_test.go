package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// uiRun is a running zkr ui process, as an operator starts it: the URL it printed,
// its address and its token.
type uiRun struct {
	t     *testing.T
	p     *proc
	url   string // as printed
	addr  string // host:port
	token string
}

// runUI starts zkr ui on a free loopback port (or as args say) and returns once it
// has printed its URL.
func runUI(t *testing.T, h *harness, args ...string) *uiRun {
	t.Helper()
	p := h.start(append([]string{"ui", "--listen", "127.0.0.1:0"}, args...)...)
	eventually(t, "the URL", func() bool { return strings.HasSuffix(p.stdout.String(), "\n") })
	printed := strings.TrimSpace(p.stdout.String())
	u, err := url.Parse(printed)
	require.NoError(t, err)
	return &uiRun{t: t, p: p, url: printed, addr: u.Host, token: u.Query().Get("token")}
}

// uiAnswer is one answer of zkr ui, read whole.
type uiAnswer struct {
	code   int
	header http.Header
	body   []byte
}

// get asks for target (a path and query) with the token and the Host the URL
// names, as the page does, unless host or a header given says otherwise.
func (u *uiRun) get(target string, header ...string) uiAnswer {
	u.t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+u.addr+target, nil)
	require.NoError(u.t, err)
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	return u.do(req)
}

// withToken adds the token to target's query.
func (u *uiRun) withToken(target string) string {
	sep := "?"
	if strings.Contains(target, "?") {
		sep = "&"
	}
	return target + sep + "token=" + u.token
}

func (u *uiRun) do(req *http.Request) uiAnswer {
	u.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(u.t, err, "%s %s", req.Method, req.URL)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(u.t, err)
	return uiAnswer{code: resp.StatusCode, header: resp.Header, body: body}
}

// json asks for target with the token and decodes the answer into v, which it
// wants to be code.
func (u *uiRun) json(target string, code int, v any) {
	u.t.Helper()
	a := u.get(u.withToken(target))
	require.Equal(u.t, code, a.code, "%s: %s", target, a.body)
	require.NoError(u.t, json.Unmarshal(a.body, v), "%s: %s", target, a.body)
}
