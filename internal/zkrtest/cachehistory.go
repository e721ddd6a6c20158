package zkrtest

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
)

// CachedNode is what a cache's event says of a node: enough to check a history.
type CachedNode struct {
	Path         string
	Data         []byte
	Czxid, Mzxid int64
	Version      int32
}

// CacheHistory checks the events a cache listener hears against a model of what it
// was told: no Changed or Deleted of a node it was not told exists, no Created twice
// without a Deleted between, no version going back, no deleted incarnation (czxid)
// coming back, parents created before and deleted after their children, and Old
// always what it was last told. It is shared by the cache's own tests and the chaos
// run, which hear events of the recipes/cache package (this package cannot import
// it: the cache's tests import this one).
type CacheHistory struct {
	root       string
	mu         sync.Mutex
	heard      int
	live       map[string]CachedNode
	gone       map[int64]bool
	violations []string
}

// NewCacheHistory checks the history of a cache of root.
func NewCacheHistory(root string) *CacheHistory {
	return &CacheHistory{root: root, live: map[string]CachedNode{}, gone: map[int64]bool{}}
}

// Hear checks one event: kind is its type's name; events of other kinds than
// Created, Changed and Deleted change nothing.
func (h *CacheHistory) Hear(kind, path string, old, new CachedNode) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.heard++
	bad := func(format string, args ...any) {
		h.violations = append(h.violations, fmt.Sprintf("event %d %s %s: ", h.heard-1, kind, path)+fmt.Sprintf(format, args...))
	}
	was, known := h.live[path]
	switch kind {
	case "Created":
		if known {
			bad("created twice")
		}
		if _, ok := h.live[parentOf(path)]; !ok && path != h.root {
			bad("created before its parent")
		}
		if h.gone[new.Czxid] {
			bad("an incarnation deleted before (czxid %d) came back", new.Czxid)
		}
		if new.Path != path {
			bad("New.Path %q", new.Path)
		}
		h.live[path] = new
	case "Changed":
		switch {
		case !known:
			bad("changed, never created")
		case !sameCached(was, old):
			bad("Old %+v is not what was said before, %+v", old, was)
		case new.Czxid != was.Czxid:
			bad("changed into another incarnation")
		case new.Version <= was.Version || new.Mzxid <= was.Mzxid:
			bad("version %d after %d", new.Version, was.Version)
		}
		h.live[path] = new
	case "Deleted":
		if !known {
			bad("deleted, never created")
		} else if !sameCached(was, old) {
			bad("Old %+v is not what was said before, %+v", old, was)
		}
		for p := range h.live {
			if strings.HasPrefix(p, path+"/") || (path == "/" && p != "/") {
				bad("deleted before its child %s", p)
			}
		}
		h.gone[was.Czxid] = true
		delete(h.live, path)
	}
}

// Violations are the impossible steps heard so far.
func (h *CacheHistory) Violations() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.violations...)
}

// Heard is how many events were heard.
func (h *CacheHistory) Heard() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.heard
}

func sameCached(a, b CachedNode) bool {
	return a.Path == b.Path && bytes.Equal(a.Data, b.Data) && a.Czxid == b.Czxid && a.Mzxid == b.Mzxid && a.Version == b.Version
}

func parentOf(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}
