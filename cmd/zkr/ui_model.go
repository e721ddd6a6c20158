package main

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/cache"
	"github.com/zkrecipes/zkrecipes/recipes/participants"
)

// How many children /api/node lists at once, unless asked, and at most. A node
// with 100,000 children is shown a page at a time, so that neither the answer
// nor the page grows with the subtree.
const (
	uiPageDefault = 100
	uiPageMax     = 1000
)

// uiRecipeLimit is the most children a node may have to be read as a recipe: a
// lock with more participants than that is summed up by its count, and zkr
// inspect reads it whole.
const uiRecipeLimit = 1000

var errUIQuery = errors.New("zkr ui: bad query")

// uiNode is /api/node: one node of the copy, a page of its children, and the
// recipe its layout shows, read as zkr inspect reads it.
type uiNode struct {
	Path       string     `json:"path"`
	Connection string     `json:"connection"` // connected, suspended or lost
	Seq        uint64     `json:"seq"`        // the changes the copy had when read
	Now        time.Time  `json:"now"`        // the server's clock, for ages
	Exists     bool       `json:"exists"`
	Stat       *nodeStat  `json:"stat,omitempty"` // as zkr stat --json shows it
	Data       *blob      `json:"data,omitempty"`
	Children   uiChildren `json:"children"`
	Recipe     view       `json:"recipe"` // null when the layout is no recipe's
	RecipeNote string     `json:"recipe_note,omitempty"`
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

// readUINode reads p from the copy: its node, children[offset:offset+limit], and
// the recipe inspect's look finds there.
func readUINode(ctx context.Context, ca *cache.Cache, p string, offset, limit int, seq uint64, conn string) *uiNode {
	n := &uiNode{Path: p, Connection: conn, Seq: seq, Now: time.Now().UTC(),
		Children: uiChildren{Offset: offset, Names: []uiChild{}}}
	node, ok := ca.Get(p)
	if !ok {
		return n
	}
	data := newBlob(node.Data)
	st := newNodeStat(&node.Stat)
	n.Exists, n.Stat, n.Data = true, &st, &data
	names := ca.Children(p)
	n.Children.Total = len(names)
	for _, name := range names[min(offset, len(names)):min(offset+limit, len(names))] {
		c := uiChild{Name: name}
		if child, ok := ca.Get(path.Join(p, name)); ok {
			c.NumChildren, c.Ephemeral = int(child.Stat.NumChildren), child.Stat.EphemeralOwner != 0
		}
		n.Children.Names = append(n.Children.Names, c)
	}
	if len(names) > uiRecipeLimit {
		n.RecipeNote = fmt.Sprintf("%d children: too many to read as a recipe here; zkr inspect %s reads it", len(names), p)
		return n
	}
	v, err := look(ctx, participants.FromCache(ca), p, "")
	switch rv := v.(type) {
	case nil:
		if err != nil {
			n.RecipeNote = err.Error()
		}
	case *queue:
		if rv.Recipe != "" {
			n.Recipe = rv
		}
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
