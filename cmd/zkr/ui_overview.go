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

// overviewLimits bound the overview's walk of the copy, so that neither its work
// nor its answer grows with the subtree: it looks at no more than nodes nodes,
// breadth first, and lists no more than recipes recipes. A page that was cut
// short says so.
type overviewLimits struct {
	nodes   int
	recipes int
}

var uiOverviewLimits = overviewLimits{nodes: 100_000, recipes: 100}

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
	Recipes    []uiRecipe `json:"recipes"` // by path
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

// readOverview walks the copy from its root, breadth first and in name order, and
// lists the recipes it finds, as zkr inspect tells them (look): lock-like recipes,
// partitions and groups. It does not walk into a recipe's own nodes. Values (shared
// counts, counters) are told only by their length, so they are left to the node
// pages. The walk reads the copy only: it sends ZooKeeper nothing.
func readOverview(ctx context.Context, ca *cache.Cache, lim overviewLimits, seq uint64, conn string) *uiOverview {
	root := ca.Path()
	o := &uiOverview{Root: root, Connection: conn, Seq: seq, Now: time.Now().UTC(), Recipes: []uiRecipe{}}
	r := participants.FromCache(ca)
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
		rec := overviewRecipe(ctx, ca, r, p, children)
		if rec == nil {
			for _, name := range children {
				next = append(next, path.Join(p, name))
			}
			continue
		}
		if len(o.Recipes) == lim.recipes {
			o.Capped = fmt.Sprintf("lists the first %d recipes found under %s, breadth first; there are more (zkr ui with a deeper PATH lists them)",
				lim.recipes, root)
			break
		}
		o.Recipes = append(o.Recipes, *rec)
	}
	slices.SortFunc(o.Recipes, func(a, b uiRecipe) int { return strings.Compare(a.Path, b.Path) })
	return o
}

// overviewRecipe tells the recipe at p from its listing, as look does, and sums it
// up; nil when p is no recipe's (the walk goes on below it). A recipe with more
// than uiRecipeLimit nodes to read is named, not read.
func overviewRecipe(ctx context.Context, ca *cache.Cache, r participants.Reader, p string, children []string) *uiRecipe {
	if len(children) == 0 {
		return nil // a value, or an idle recipe's parent: the node pages show them
	}
	rec := &uiRecipe{Path: p}
	size := len(children)
	layout, lockLike := participants.Detect(children)
	sem, _ := isSemaphore(ctx, r, p, children) // the copy's reader fails on nothing
	switch {
	case slices.Contains(children, "members") && slices.Contains(children, "items"):
		rec.Recipe, size = "partition", len(ca.Children(path.Join(p, "items")))
	case sem:
		rec.Recipe, size = "semaphore", len(ca.Children(path.Join(p, "leases")))+len(ca.Children(path.Join(p, "locks")))
	case lockLike:
		rec.Recipe = layout.Recipe()
	case len(children) <= uiRecipeLimit && allEphemeral(ca, p, children):
		rec.Recipe, rec.Group = asGroup, &uiGroupSummary{Members: len(children)}
		return rec
	default:
		return nil
	}
	if size > uiRecipeLimit {
		rec.Note = fmt.Sprintf("%d nodes: too many to read here; zkr inspect %s reads it", size, p)
		return rec
	}
	q, err := surveyOf(ctx, r, p, children)
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
