package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"sync"
	"time"

	"github.com/zkrecipes/zkrecipes/cmd/zkr/ui"
	"github.com/zkrecipes/zkrecipes/recipes/cache"
)

// The connection as the page shows it: the copy is current only while connected.
const (
	connConnected = "connected"
	connSuspended = "suspended" // the connection dropped: the copy may be stale
	connLost      = "lost"      // the session ended: the copy is being read again
)

// uiServer serves zkr ui: the page, the JSON API over one cache's copy of the
// subtree, and the copy's changes as Server-Sent Events. No request of a browser
// reaches ZooKeeper, so a thousand open tabs cost the servers nothing: they read
// the copy, and they hear of changes from the one cache's watches.
type uiServer struct {
	ca       *cache.Cache
	holdWarn time.Duration
	limits   overviewLimits
	done     chan struct{} // closed by stop: ends the event streams
	mux      *http.ServeMux

	mu   sync.Mutex
	seq  uint64 // events the cache told, so that a page knows what it shows
	conn string
	subs map[chan struct{}]struct{} // one per event stream: a token means "read again"
}

func newUIServer(ca *cache.Cache, holdWarn time.Duration) *uiServer {
	s := &uiServer{ca: ca, holdWarn: holdWarn, limits: uiOverviewLimits, done: make(chan struct{}), mux: http.NewServeMux(),
		conn: connConnected, subs: map[chan struct{}]struct{}{}}
	assets, _ := fs.Sub(ui.Assets, "assets") // the directory is embedded: it exists
	// Patterns with GET also match HEAD; every other method gets 405: the server
	// changes nothing.
	s.mux.Handle("GET /{$}", noQuery(serveAsset(assets, "index.html")))
	s.mux.Handle("GET /assets/", noQuery(http.StripPrefix("/assets/", http.FileServerFS(assets))))
	s.mux.Handle("GET /api/status", noQuery(http.HandlerFunc(s.status)))
	s.mux.HandleFunc("GET /api/overview", s.overview)
	s.mux.HandleFunc("GET /api/node", s.node)
	s.mux.Handle("GET /api/events", noQuery(http.HandlerFunc(s.events)))
	return s
}

// noQuery serves h to requests whose query has no parameter but the token.
func noQuery(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := checkQuery(r.URL.Query()); err != nil {
			refuse(w, r, http.StatusBadRequest, err.Error())
			return
		}
		h.ServeHTTP(w, r)
	})
}

// ServeHTTP adds the headers that keep the page's content inert: even a name that
// got into the page as markup could neither run a script (no inline script or
// handler is allowed) nor load anything from elsewhere.
func (s *uiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; "+
		"connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	s.mux.ServeHTTP(w, r)
}

func serveAsset(assets fs.FS, name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, assets, name)
	})
}

// hear is the cache's listener: it counts the event, follows the connection, and
// wakes every event stream without waiting for any.
func (s *uiServer) hear(ev cache.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	switch ev.Type {
	case cache.Suspended:
		s.conn = connSuspended
	case cache.Lost:
		s.conn = connLost
	case cache.Synced:
		s.conn = connConnected
	}
	for ch := range s.subs {
		select {
		case ch <- struct{}{}:
		default: // a wake-up is pending already: the stream will read the latest
		}
	}
}

func (s *uiServer) state() (seq uint64, conn string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seq, s.conn
}

// stop ends the event streams, so that the HTTP server can shut down.
func (s *uiServer) stop() { close(s.done) }

// uiStatus is /api/status.
type uiStatus struct {
	Root            string    `json:"root"`
	Connection      string    `json:"connection"`
	Seq             uint64    `json:"seq"`
	Nodes           int       `json:"nodes"`
	HoldWarnSeconds float64   `json:"hold_warn_seconds"`
	Now             time.Time `json:"now"`
}

func (s *uiServer) status(w http.ResponseWriter, r *http.Request) {
	seq, conn := s.state()
	writeJSON(w, http.StatusOK, uiStatus{Root: s.ca.Path(), Connection: conn, Seq: seq, Nodes: s.ca.Len(),
		HoldWarnSeconds: s.holdWarn.Seconds(), Now: time.Now().UTC()})
}

// overview is /api/overview?offset=N&limit=M: a page of the recipes under the root.
func (s *uiServer) overview(w http.ResponseWriter, r *http.Request) {
	q, err := checkQuery(r.URL.Query(), "offset", "limit")
	var offset, limit int
	if err == nil {
		offset, err = q.number("offset", 0)
	}
	if err == nil {
		limit, err = q.number("limit", uiPageDefault)
	}
	if err != nil {
		writeJSON(w, http.StatusBadRequest, uiError{Error: err.Error()})
		return
	}
	seq, conn := s.state()
	writeJSON(w, http.StatusOK, readOverview(r.Context(), s.ca, s.limits, offset, min(limit, uiPageMax), seq, conn))
}

// node is /api/node?path=P&offset=N&limit=M (parseNodeQuery has the rest).
func (s *uiServer) node(w http.ResponseWriter, r *http.Request) {
	q, err := parseNodeQuery(s.ca.Path(), r.URL.Query())
	if err != nil {
		writeJSON(w, http.StatusBadRequest, uiError{Error: err.Error()})
		return
	}
	seq, conn := s.state()
	writeJSON(w, http.StatusOK, readUINode(r.Context(), s.ca, q, seq, conn))
}

// uiChange is one Server-Sent Event of /api/events.
type uiChange struct {
	Seq        uint64 `json:"seq"`
	Connection string `json:"connection"`
}

// events streams a "change" event now and after every change of the copy or the
// connection. Changes that come while a stream is writing are told once, as the
// latest: a page reads what it shows again, it needs no history.
func (s *uiServer) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		writeJSON(w, http.StatusInternalServerError, uiError{Error: "zkr ui: streaming unsupported"})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	wake := make(chan struct{}, 1)
	s.mu.Lock()
	s.subs[wake] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.subs, wake)
		s.mu.Unlock()
	}()
	for {
		seq, conn := s.state()
		data, _ := json.Marshal(uiChange{Seq: seq, Connection: conn}) // plain data
		if _, err := fmt.Fprintf(w, "event: change\ndata: %s\n\n", data); err != nil {
			return
		}
		fl.Flush()
		select {
		case <-wake:
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		}
	}
}

type uiError struct {
	Error string `json:"error"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v) // plain data; a failed write is the client gone
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
