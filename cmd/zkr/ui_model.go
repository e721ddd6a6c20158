package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/cache"
	"github.com/zkrecipes/zkrecipes/recipes/participants"
)

// How many of each list (children, a recipe's participants, members, items; the
// overview's recipes) an answer holds, unless asked, and at most. A node with
// 100,000 children is shown a page at a time, so that neither the answer nor the
// page grows with the subtree.
const (
	uiPageDefault = 100
	uiPageMax     = 1000
)

// uiRecipeLimit is the most nodes a recipe may have to be read (a lock's
// participants, a partition's items, a semaphore's leases and waiters): a larger
// one is summed up by its count, and zkr inspect reads it whole. Every request
// reads the whole recipe, to know who holds, before it cuts out a page.
const uiRecipeLimit = 1000

var errUIQuery = errors.New("zkr ui: bad query")

// uiNode is /api/node: one node of the copy, a page of its children, and the
// recipe its layout shows, read as zkr inspect reads it.
type uiNode struct {
	Path        string         `json:"path"`
	Connection  string         `json:"connection"` // connected, suspended or lost
	Seq         uint64         `json:"seq"`        // the changes the copy had when read
	Now         time.Time      `json:"now"`        // the server's clock, for ages
	Exists      bool           `json:"exists"`
	Stat        *nodeStat      `json:"stat,omitempty"` // as zkr stat --json shows it
	Data        *blob          `json:"data,omitempty"`
	Children    uiChildren     `json:"children"`
	Recipe      view           `json:"recipe"`                 // null when the layout is no recipe's; its lists a page each
	RecipePages *uiRecipePages `json:"recipe_pages,omitempty"` // which pages of the recipe's lists
	RecipeNote  string         `json:"recipe_note,omitempty"`
}

// uiRecipePages says which page of each of the recipe's lists an answer holds,
// and what the page needs to know of the lists as a whole.
type uiRecipePages struct {
	Participants *uiPage `json:"participants,omitempty"` // a lock-like recipe's queue
	Members      *uiPage `json:"members,omitempty"`      // a group's or a partition's
	Items        *uiPage `json:"items,omitempty"`        // a partition's
	Holding      int     `json:"holding"`                // participants that hold, of them all
	Unowned      int     `json:"unowned"`                // a partition's items without an owner, of them all
	Owned        []int   `json:"owned,omitempty"`        // the items each member of the page owns (a partition)
}

// uiNodeQuery is what /api/node was asked: a node, how many of each list, and
// where each list's page starts.
type uiNodeQuery struct {
	path                  string
	limit                 int
	children              int
	participants, members int
	items                 int
}

// parseNodeQuery reads /api/node's parameters: path (the root when absent),
// limit, offset (the children's) and each recipe list's offset.
func parseNodeQuery(root string, v url.Values) (uiNodeQuery, error) {
	q, err := checkQuery(v, "path", "limit", "offset", "participants_offset", "members_offset", "items_offset")
	if err != nil {
		return uiNodeQuery{}, err
	}
	var errs []error
	number := func(name string, def int) int {
		n, err := q.number(name, def)
		errs = append(errs, err)
		return n
	}
	nq := uiNodeQuery{path: v.Get("path"), limit: min(number("limit", uiPageDefault), uiPageMax),
		children: number("offset", 0), participants: number("participants_offset", 0),
		members: number("members_offset", 0), items: number("items_offset", 0)}
	if nq.path == "" {
		nq.path = root
	}
	return nq, firstErr(append(errs, checkUIPath(root, nq.path))...)
}

type uiChildren struct {
	Total  int       `json:"total"`
	Offset int       `json:"offset"`
	Names  []uiChild `json:"names"`
}

type uiChild struct {
	Name        string `json:"name"`
	NumChildren int    `json:"num_children"`
	Ephemeral   bool   `json:"ephemeral"`
}

// checkUIPath accepts the cache's root and the paths under it.
func checkUIPath(root, p string) error {
	if err := framework.ValidatePath(p); err != nil {
		return fmt.Errorf("%w: %w", errUIQuery, err)
	}
	if p != root && root != "/" && !strings.HasPrefix(p, root+"/") {
		return fmt.Errorf("%w: %s is not under %s", errUIQuery, p, root)
	}
	return nil
}

// readUINode reads q's node from the copy: its node, a page of its children, and
// the recipe inspect's look finds there, a page of each of its lists.
func readUINode(ctx context.Context, ca *cache.Cache, q uiNodeQuery, seq uint64, conn string) *uiNode {
	p := q.path
	n := &uiNode{Path: p, Connection: conn, Seq: seq, Now: time.Now().UTC(),
		Children: uiChildren{Offset: q.children, Names: []uiChild{}}}
	node, ok := ca.Get(p)
	if !ok {
		return n
	}
	data := newBlob(node.Data)
	st := newNodeStat(&node.Stat)
	n.Exists, n.Stat, n.Data = true, &st, &data
	names := ca.Children(p)
	n.Children.Total = len(names)
	for _, name := range cut(names, q.children, q.limit) {
		c := uiChild{Name: name}
		if child, ok := ca.Get(path.Join(p, name)); ok {
			c.NumChildren, c.Ephemeral = int(child.Stat.NumChildren), child.Stat.EphemeralOwner != 0
		}
		n.Children.Names = append(n.Children.Names, c)
	}
	r := participants.FromCache(ca)
	if size := recipeSize(ctx, ca, r, p, names); size > uiRecipeLimit {
		n.RecipeNote = fmt.Sprintf("%d nodes: too many to read as a recipe here; zkr inspect %s reads it", size, p)
		return n
	}
	v, err := look(ctx, r, p, "")
	switch rv := v.(type) {
	case nil:
		if err != nil {
			n.RecipeNote = err.Error()
		}
	case *queue:
		if rv.Recipe != "" {
			n.Recipe, n.RecipePages = rv, pageQueue(rv, q)
		}
	case *groupView:
		n.Recipe, n.RecipePages = rv, &uiRecipePages{Members: &uiPage{Total: len(rv.Members), Offset: q.members}}
		rv.Members = cut(rv.Members, q.members, q.limit)
	case *valueView:
		if rv.Number != nil { // a shared value is the data, shown already
			n.Recipe = rv
		}
	case *plainView: // no recipe's layout: the node's stat and children say it all
	default:
		n.Recipe = v
	}
	return n
}

// pageQueue cuts a queue's lists to q's pages, and says what the page needs of
// the whole: how many hold, and a partition's items without an owner and each
// member's share.
func pageQueue(rv *queue, q uiNodeQuery) *uiRecipePages {
	pg := &uiRecipePages{}
	if rv.Recipe != "partition" {
		for _, x := range rv.Participants {
			if x.holds() {
				pg.Holding++
			}
		}
		pg.Participants = &uiPage{Total: len(rv.Participants), Offset: q.participants}
		rv.Participants = cut(rv.Participants, q.participants, q.limit)
		return pg
	}
	owned := map[string]int{}
	for _, it := range rv.Items {
		if it.Owner == "" {
			pg.Unowned++
		}
		owned[it.Owner]++
	}
	pg.Members = &uiPage{Total: len(rv.Members), Offset: q.members}
	pg.Items = &uiPage{Total: len(rv.Items), Offset: q.items}
	rv.Members, rv.Items = cut(rv.Members, q.members, q.limit), cut(rv.Items, q.items, q.limit)
	pg.Owned = make([]int, len(rv.Members))
	for i, m := range rv.Members {
		pg.Owned[i] = owned[m]
	}
	return pg
}

// recipeSize is how many nodes reading p as a recipe reads: a partition's items,
// a semaphore's leases and waiters, else p's children (given). The node pages and
// the overview both go by it, so that neither reads a large recipe whole for a
// page of it.
func recipeSize(ctx context.Context, ca *cache.Cache, r participants.Reader, p string, children []string) int {
	if slices.Contains(children, "members") && slices.Contains(children, "items") {
		return len(ca.Children(path.Join(p, "items")))
	}
	if sem, _ := isSemaphore(ctx, r, p, children); sem { // the copy's reader fails on nothing
		return len(ca.Children(path.Join(p, "leases"))) + len(ca.Children(path.Join(p, "locks")))
	}
	return len(children)
}
