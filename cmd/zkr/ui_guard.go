package main

import (
	"crypto/rand"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// The per-run token: in the URL zkr ui prints, then in a cookie the page keeps.
const uiTokenParam = "token"

// uiGuard lets a request reach zkr ui only if it names a host the server was
// asked to listen on and carries this run's token.
//
// The Host check stops DNS rebinding: a page on evil.example that points its
// name at 127.0.0.1 makes the browser send "Host: evil.example" to zkr ui, and
// would otherwise read everything under PATH with the operator's credentials.
// The token stops whatever else reaches the port (another local user, a page
// that guesses the port, anyone on the network with --listen beyond loopback):
// only who was shown the printed URL has it. The cookie is HttpOnly (no script
// reads it) and SameSite=Strict (no other site's page sends it), and its name
// carries the port, since a browser shares cookies between a host's ports.
type uiGuard struct {
	next   http.Handler
	token  string
	cookie string
	// hosts are the names and addresses answered; anyIP also answers every IP
	// literal, for a server listening on every interface (no name to rebind).
	hosts map[string]bool
	anyIP bool
}

// newUIToken is a fresh token: 128 random bits in 26 characters, A-Z and 2-7,
// which a URL carries as they are.
func newUIToken() string { return rand.Text() }

// newUIGuard guards next for a server asked to listen on host (--listen's) and
// listening on addr. It answers the loopback names, host and addr's address;
// when host is unspecified (every interface), also every IP literal and this
// machine's host name.
func newUIGuard(next http.Handler, token, host string, addr *net.TCPAddr, hostname string) *uiGuard {
	g := &uiGuard{next: next, token: token, cookie: fmt.Sprintf("zkr_ui_%d", addr.Port),
		hosts: map[string]bool{"localhost": true, strings.ToLower(host): true, addr.IP.String(): true}}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		g.anyIP = true
		g.hosts[strings.ToLower(hostname)] = true
	}
	delete(g.hosts, "")
	return g
}

func (g *uiGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if host := hostOf(r.Host); !g.answers(host) {
		refuse(w, r, http.StatusMisdirectedRequest, fmt.Sprintf(
			"zkr ui: this server does not answer for host %q: open the URL zkr ui printed", host))
		return
	}
	got, fromQuery := r.URL.Query().Get(uiTokenParam), true
	if got == "" {
		fromQuery = false
		if c, err := r.Cookie(g.cookie); err == nil {
			got = c.Value
		}
	}
	if subtle.ConstantTimeCompare([]byte(got), []byte(g.token)) != 1 {
		refuse(w, r, http.StatusForbidden,
			"zkr ui: this needs the token of the URL zkr ui printed when it started (…/?token=…): open that URL")
		return
	}
	if fromQuery {
		http.SetCookie(w, &http.Cookie{Name: g.cookie, Value: g.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	}
	g.next.ServeHTTP(w, r)
}

// answers tells whether host is one the server was asked to listen on.
func (g *uiGuard) answers(host string) bool {
	host = strings.ToLower(host)
	ip := net.ParseIP(host)
	return g.hosts[host] || ip != nil && (ip.IsLoopback() || g.anyIP)
}

// hostOf is the host of a Host header, without its port or an IPv6 literal's
// brackets.
func hostOf(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
}

// refuse answers a refused request: JSON for the API, as its other errors are;
// text for the page, which a person reads. The message may quote the request (a
// Host), so nothing of it may be taken for markup.
func refuse(w http.ResponseWriter, r *http.Request, code int, msg string) {
	w.Header().Set("Content-Security-Policy", "default-src 'none'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if strings.HasPrefix(r.URL.Path, "/api/") {
		writeJSON(w, code, uiError{Error: msg})
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	fmt.Fprintln(w, msg)
}
