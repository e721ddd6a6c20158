package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/cache"
)

// treeSummary is what `zkr inspect PATH --tree` shows: the subtree loaded once into
// a cache (recipes/cache), as a program following it would hold it, and summed up.
type treeSummary struct {
	Path        string      `json:"path"`
	Exists      bool        `json:"exists"`
	Nodes       int         `json:"nodes"`
	DataBytes   int64       `json:"data_bytes"`
	Levels      int         `json:"levels"`    // of the deepest node below PATH
	Ephemeral   int         `json:"ephemeral"` // nodes that live as long as a session
	LastChanged *treeChange `json:"last_changed,omitempty"`
	Refused     []string    `json:"refused"` // nodes an ACL kept from us
	Children    []treeChild `json:"children"`
}

type treeChange struct {
	Path     string    `json:"path"`
	Version  int32     `json:"version"`
	Modified time.Time `json:"modified"`
}

// treeChild is one child of PATH and its subtree.
type treeChild struct {
	Name      string `json:"name"`
	Nodes     int    `json:"nodes"`
	DataBytes int64  `json:"data_bytes"`
}

// summarize loads p's subtree, depth levels deep (negative: all), and sums it up.
func summarize(ctx context.Context, c *framework.Client, p string, depth int) (*treeSummary, error) {
	var opts []cache.Option
	if depth >= 0 {
		opts = append(opts, cache.Depth(depth))
	}
	ca, err := cache.New(c, p, opts...)
	if err != nil {
		return nil, err
	}
	defer ca.Close(context.Background()) // the cache only reads: its reads end with it
	var mu sync.Mutex
	s := &treeSummary{Path: p, Refused: []string{}, Children: []treeChild{}}
	ca.Listen(func(ev cache.Event) {
		if ev.Type == cache.Error {
			mu.Lock()
			s.Refused = append(s.Refused, ev.Path)
			mu.Unlock()
		}
	})
	if err := ca.Start(ctx); err != nil {
		return nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	children := map[string]*treeChild{}
	var newest int64
	for _, n := range ca.Nodes() {
		s.Nodes++
		s.DataBytes += int64(len(n.Data))
		if n.Stat.EphemeralOwner != 0 {
			s.Ephemeral++
		}
		if n.Stat.Mzxid > newest {
			newest = n.Stat.Mzxid
			s.LastChanged = &treeChange{Path: n.Path, Version: n.Stat.Version, Modified: time.UnixMilli(n.Stat.Mtime).UTC()}
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(n.Path, p), "/")
		if n.Path == p {
			s.Exists = true
			continue
		}
		s.Levels = max(s.Levels, strings.Count(rel, "/")+1)
		name, _, _ := strings.Cut(rel, "/")
		ch := children[name]
		if ch == nil {
			ch = &treeChild{Name: name}
			children[name] = ch
		}
		ch.Nodes++
		ch.DataBytes += int64(len(n.Data))
	}
	for _, name := range ca.Children(p) {
		if ch := children[name]; ch != nil {
			s.Children = append(s.Children, *ch)
		}
	}
	return s, nil
}

func (s *treeSummary) print(e *env) {
	if !s.Exists {
		fmt.Fprintf(e.stdout, "%s: no such node\n", s.Path)
		return
	}
	fmt.Fprintf(e.stdout, "%s: %d nodes, %d levels below, %d bytes of data, %d ephemeral\n",
		s.Path, s.Nodes, s.Levels, s.DataBytes, s.Ephemeral)
	if l := s.LastChanged; l != nil {
		fmt.Fprintf(e.stdout, "last changed: %s (version %d) at %s\n", printable(l.Path), l.Version, l.Modified.Format(time.RFC3339))
	}
	for _, r := range s.Refused {
		fmt.Fprintf(e.stdout, "refused by an ACL: %s\n", printable(r))
	}
	if len(s.Children) == 0 {
		return
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHILD\tNODES\tBYTES")
	for _, ch := range s.Children {
		fmt.Fprintf(tw, "%s\t%d\t%d\n", printable(ch.Name), ch.Nodes, ch.DataBytes)
	}
	_ = tw.Flush()
}
