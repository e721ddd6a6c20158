package main

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/zkrecipes/zkrecipes/recipes/cache"
	"github.com/zkrecipes/zkrecipes/recipes/participants"
)

// overviewLimits bound the overview's walk of the copy, so that its work does not
// grow with the subtree: it looks at no more than nodes nodes, breadth first. A
// walk cut short says so. The recipes found are listed a page at a time.
type overviewLimits struct {
	nodes int
}

var uiOverviewLimits = overviewLimits{nodes: 100_000}

// How many names a line of the overview lists (holders, members, items without an
// owner) and how long a name or id may be there: the rest is counted, and the
// recipe's own page shows it all.
const (
	uiOverviewNames = 20
	uiOverviewIDLen = 100
)

// uiOverview is /api/overview: the recipes found under the root, each with what an
// operator looks for first.
type uiOverview struct {
	Root       string     `json:"root"`
	Connection string     `json:"connection"`
	Seq        uint64     `json:"seq"`
	Now        time.Time  `json:"now"`
	Exists     bool       `json:"exists"`   // false: the copy has no node at the root
	Examined   int        `json:"examined"` // nodes the walk looked at
	Capped     string     `json:"capped,omitempty"`
	Total      int        `json:"total"`   // recipes found
	Offset     int        `json:"offset"`  // the first one listed
	Recipes    []uiRecipe `json:"recipes"` // by path, from offset, at most the limit asked
}

// uiRecipe is one recipe of the overview: a lock-like recipe's queue, a group's
// size or a partition's members and items.
type uiRecipe struct {
	Path      string            `json:"path"`
	Recipe    string            `json:"recipe"` // mutex, latch, rwlock, semaphore, leases, group, partition
	Queue     *uiQueueSummary   `json:"queue,omitempty"`
	Group     *uiGroupSummary   `json:"group,omitempty"`
	Partition *uiPartitionBrief `json:"partition,omitempty"`
	Note      string            `json:"note,omitempty"` // why it was not read, if so
}

type uiQueueSummary struct {
	Holding int        `json:"holding"`
	Waiting int        `json:"waiting"`
	Holders []uiHolder `json:"holders"` // in queue order, the first 20
}

// uiHolder is a holder (a latch's leader) in the overview. Its age is its node's,
// as on the recipe's page: from when it joined the queue, any wait included, for
// ZooKeeper records no time of grant.
type uiHolder struct {
	ID           string  `json:"id"`
	AgeSeconds   float64 `json:"age_seconds"`
	FencingToken int64   `json:"fencing_token"`
}

type uiGroupSummary struct {
	Members int `json:"members"`
}

type uiPartitionBrief struct {
	Members      int      `json:"members"`
	MemberIDs    []string `json:"member_ids"` // the first 20, by name
	Items        int      `json:"items"`
	Unowned      int      `json:"unowned"`
	UnownedItems []string `json:"unowned_items"` // the first 20, by name
}

// readOverview walks the copy from its root, breadth first and in name order,
// finds the recipes there as zkr inspect tells them (look): lock-like recipes,
// partitions and groups; and reads the page of them from offset, by path. It does
// not walk into a recipe's own nodes. Values (shared counts, counters) are told
// only by their length, so they are left to the node pages. The walk reads the
// copy only: it sends ZooKeeper nothing.
func readOverview(ctx context.Context, ca *cache.Cache, lim overviewLimits, offset, limit int, seq uint64, conn string) *uiOverview {
	root := ca.Path()
	o := &uiOverview{Root: root, Connection: conn, Seq: seq, Now: time.Now().UTC(), Offset: offset, Recipes: []uiRecipe{}}
	r := participants.FromCache(ca)
	var found []uiRecipe // their path and recipe: read only if on the page
	next := []string{root}
	for len(next) > 0 {
		if o.Examined == lim.nodes {
			o.Capped = fmt.Sprintf("looked at the first %d of the %d nodes under %s, breadth first: recipes further down are not listed (zkr ui with a deeper PATH lists them)",
				lim.nodes, ca.Len(), root)
			break
		}
		p := next[0]
		next = next[1:]
		children := ca.Children(p)
		if children == nil { // deleted since its parent was listed
			continue
		}
		o.Examined++
		o.Exists = true
		if recipe := overviewKind(ctx, ca, r, p, children); recipe != "" {
			found = append(found, uiRecipe{Path: p, Recipe: recipe})
			continue
		}
		for _, name := range children {
			next = append(next, path.Join(p, name))
		}
	}
	slices.SortFunc(found, func(a, b uiRecipe) int { return strings.Compare(a.Path, b.Path) })
	o.Total = len(found)
	for _, rec := range cut(found, offset, limit) {
		o.Recipes = append(o.Recipes, overviewRecipe(ctx, ca, r, rec))
	}
	return o
}

// overviewKind tells the recipe at p from its listing, as look does; "" when p is
// no recipe's (the walk goes on below it).
func overviewKind(ctx context.Context, ca *cache.Cache, r participants.Reader, p string, children []string) string {
	if len(children) == 0 {
		return "" // a value, or an idle recipe's parent: the node pages show them
	}
	layout, lockLike := participants.Detect(children)
	sem, _ := isSemaphore(ctx, r, p, children) // the copy's reader fails on nothing
	switch {
	case slices.Contains(children, "members") && slices.Contains(children, "items"):
		return "partition"
	case sem:
		return "semaphore"
	case lockLike:
		return layout.Recipe()
	case len(children) <= uiRecipeLimit && allEphemeral(ca, p, children):
		return asGroup
	}
	return ""
}

// overviewRecipe sums up rec, a recipe the walk found. A recipe with more than
// uiRecipeLimit nodes to read is named, not read.
func overviewRecipe(ctx context.Context, ca *cache.Cache, r participants.Reader, rec uiRecipe) uiRecipe {
	children := ca.Children(rec.Path)
	if rec.Recipe == asGroup {
		rec.Group = &uiGroupSummary{Members: len(children)}
		return rec
	}
	if size := recipeSize(ctx, ca, r, rec.Path, children); size > uiRecipeLimit {
		rec.Note = fmt.Sprintf("%d nodes: too many to read here; zkr inspect %s reads it", size, rec.Path)
		return rec
	}
	q, err := surveyOf(ctx, r, rec.Path, children)
	if err != nil {
		rec.Note = err.Error()
		return rec
	}
	if q.Recipe == "partition" {
		rec.Partition = partitionBrief(q)
		return rec
	}
	s := &uiQueueSummary{Holders: []uiHolder{}}
	for _, x := range q.Participants {
		if !x.holds() {
			s.Waiting++
			continue
		}
		s.Holding++
		if len(s.Holders) < uiOverviewNames {
			s.Holders = append(s.Holders, uiHolder{ID: clip(x.ID), AgeSeconds: x.AgeSeconds, FencingToken: x.FencingToken})
		}
	}
	rec.Queue = s
	return rec
}

// allEphemeral tells whether every child of p is an ephemeral node, as a group's
// members are (an ephemeral node has no children).
func allEphemeral(ca *cache.Cache, p string, children []string) bool {
	for _, name := range children {
		n, ok := ca.Get(path.Join(p, name))
		if !ok || n.Stat.EphemeralOwner == 0 {
			return false
		}
	}
	return true
}

func partitionBrief(q *queue) *uiPartitionBrief {
	b := &uiPartitionBrief{Members: len(q.Members), MemberIDs: []string{}, Items: len(q.Items), UnownedItems: []string{}}
	for _, m := range q.Members[:min(len(q.Members), uiOverviewNames)] {
		b.MemberIDs = append(b.MemberIDs, clip(m))
	}
	for _, it := range q.Items {
		if it.Owner != "" {
			continue
		}
		b.Unowned++
		if len(b.UnownedItems) < uiOverviewNames {
			b.UnownedItems = append(b.UnownedItems, clip(it.Name))
		}
	}
	return b
}

// clip cuts an id to uiOverviewIDLen bytes, on a character's boundary: an id is a
// node's data, up to a megabyte.
func clip(s string) string {
	if len(s) <= uiOverviewIDLen {
		return s
	}
	i := uiOverviewIDLen
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
