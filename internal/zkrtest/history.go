package zkrtest

import (
	"context"
	"fmt"

	"github.com/zkrecipes/zkrecipes/framework"
)

// HistoryStep is one step of a scripted history: one write or transaction, whose
// notifications come at once, or one DeleteAll.
type HistoryStep struct {
	Name string
	Do   func(ctx context.Context, c *framework.Client) error
}

// History is a scripted history of a tree at root, for followers (caches,
// persistent watches) set before root exists; root's parent must exist. It creates
// root and nested nodes, changes data (once to the same bytes), deletes nodes,
// deletes and creates a node again in one transaction, creates and changes one in
// another, replaces a parent and its child in a third, tears a subtree down in one
// transaction and another node by node, and ends by tearing down the whole tree:
// root's deletion is the last change, and nothing before it deletes root.
func History(root string) []HistoryStep {
	p := func(rel string) string { return root + rel }
	return []HistoryStep{
		stepCreate(root, "r0"),
		stepCreate(p("/a"), "a0"),
		stepCreate(p("/a/b"), "b0"),
		stepCreate(p("/a/b/c"), "c0"),
		stepSet(p("/a"), "a1"),
		stepSet(p("/a"), "a1"),
		stepSet(p("/a/b/c"), "c1"),
		stepCreate(p("/x"), "x0"),
		stepCreate(p("/x/y"), "y0"),
		stepCreate(p("/x/y/z"), "z0"),
		stepMulti("delete and create again in one transaction",
			framework.DeleteOp(p("/a/b/c"), -1), framework.CreateOp(p("/a/b/c"), []byte("c-again"))),
		stepMulti("create and change in one transaction",
			framework.CreateOp(p("/m"), []byte("m0")), framework.SetOp(p("/m"), []byte("m1"), -1)),
		stepDelete(p("/m")),
		stepSet(root, "r1"),
		stepMulti("replace a parent and its child in one transaction",
			framework.DeleteOp(p("/x/y/z"), -1), framework.DeleteOp(p("/x/y"), -1),
			framework.CreateOp(p("/x/y"), []byte("y-again")), framework.CreateOp(p("/x/y/w"), []byte("w0"))),
		stepMulti("tear a subtree down in one transaction",
			framework.DeleteOp(p("/x/y/w"), -1), framework.DeleteOp(p("/x/y"), -1), framework.DeleteOp(p("/x"), -1)),
		stepCreate(p("/e"), ""),
		stepDeleteAll(p("/a")),
		stepCreate(p("/a"), "a-again"),
		stepSet(p("/e"), "e1"),
		stepDeleteAll(root),
	}
}

func stepCreate(path, data string) HistoryStep {
	return HistoryStep{Name: "create " + path, Do: func(ctx context.Context, c *framework.Client) error {
		_, err := c.Create(ctx, path, []byte(data))
		return err
	}}
}

func stepSet(path, data string) HistoryStep {
	return HistoryStep{Name: fmt.Sprintf("set %s to %q", path, data), Do: func(ctx context.Context, c *framework.Client) error {
		_, err := c.Set(ctx, path, []byte(data), -1)
		return err
	}}
}

func stepDelete(path string) HistoryStep {
	return HistoryStep{Name: "delete " + path, Do: func(ctx context.Context, c *framework.Client) error {
		return c.Delete(ctx, path, -1)
	}}
}

func stepMulti(name string, ops ...framework.Op) HistoryStep {
	return HistoryStep{Name: name, Do: func(ctx context.Context, c *framework.Client) error {
		_, err := c.Multi(ctx, ops...)
		return err
	}}
}

// stepDeleteAll tears path's subtree down one node at a time, children first: a step
// of several requests, whose notifications come one by one.
func stepDeleteAll(path string) HistoryStep {
	return HistoryStep{Name: "tear down " + path + " node by node", Do: func(ctx context.Context, c *framework.Client) error {
		return c.DeleteAll(ctx, path)
	}}
}
