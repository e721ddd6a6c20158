package partition

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

// Bad input gets the documented error at New, naming the problem.
func TestBadInput(t *testing.T) {
	srv := zkrtest.Server(t)
	c := newClient(t, []string{srv.Addr()})
	work := func(context.Context, Item) error { return nil }
	zkrtest.CheckConstructor(t, ErrInvalid, c, func(c *framework.Client, p string) error {
		pt, err := New(c, p, work, Items("x"))
		require.Nil(t, pt)
		return err
	})
	for _, tc := range []struct {
		name string
		work func(context.Context, Item) error
		opts []Option
		says string
	}{
		{"nil work", nil, []Option{Items("x")}, "nil work"},
		{"no items option", work, nil, "no items"},
		{"no items", work, []Option{Items()}, "no items"},
		{"both", work, []Option{Items("x"), ItemsFrom("/jobs")}, "both"},
		{"duplicate", work, []Option{Items("x", "y", "x")}, `"x" given twice`},
		{"empty name", work, []Option{Items("")}, "empty name"},
		{"slash", work, []Option{Items("a/b")}, "not a node name"},
		{"dot", work, []Option{Items("..")}, "not a node name"},
		{"nul", work, []Option{Items("a\x00")}, "not a node name"},
		{"bad ItemsFrom", work, []Option{ItemsFrom("jobs")}, "ItemsFrom"},
		{"ItemsFrom inside", work, []Option{ItemsFrom("/p/items")}, "inside"},
		{"bad id", work, []Option{Items("x"), WithID("a/b")}, "WithID"},
		{"empty id", work, []Option{Items("x"), WithID("")}, "WithID"},
		{"negative pause", work, []Option{Items("x"), WithRestartPause(-1)}, "pause"},
		{"nil option", work, []Option{Items("x"), nil}, "nil Option"},
	} {
		pt, err := New(c, "/p", tc.work, tc.opts...)
		require.Nil(t, pt, tc.name)
		require.ErrorIs(t, err, ErrInvalid, tc.name)
		require.ErrorContains(t, err, tc.says, tc.name)
	}
	require.Empty(t, children(t, c, "/"+"p"), "nothing sent")
}

// Each option refuses a bad value at New, naming itself; so does a nil Option. What
// no option can see alone (both sources, none, a source inside the partitioner's
// path) is refused by New.
func TestBadOptions(t *testing.T) {
	c := zkrtest.Offline(t)
	work := func(context.Context, Item) error { return nil }
	zkrtest.CheckOptions(t, ErrInvalid, func(opts ...Option) error {
		pt, err := New(c, "/p", work, opts...)
		require.Nil(t, pt)
		return err
	}, []zkrtest.BadOption[Option]{
		{Opts: []Option{Items("x"), WithID("")}, Says: "WithID: empty name"},
		{Opts: []Option{Items("x"), WithID("a/b")}, Says: `WithID: "a/b" is not a node name`},
		{Opts: []Option{Items("x"), WithID("..")}, Says: `WithID: ".." is not a node name`},
		{Opts: []Option{Items("")}, Says: "Items: empty name"},
		{Opts: []Option{Items("a/b")}, Says: `Items: "a/b" is not a node name`},
		{Opts: []Option{Items("x", "y", "x")}, Says: `Items: "x" given twice`},
		{Opts: []Option{Items("x"), Items("y"), Items("x")}, Says: `Items: "x" given twice`},
		{Opts: []Option{ItemsFrom("")}, Says: "ItemsFrom: "},
		{Opts: []Option{ItemsFrom("jobs")}, Says: `ItemsFrom: `},
		{Opts: []Option{ItemsFrom("/jobs/")}, Says: `ItemsFrom: `},
		{Opts: []Option{ItemsFrom("/jobs"), ItemsFrom("")}, Says: `ItemsFrom: `},
		{Opts: []Option{Items("x"), WithRestartPause(-time.Second)}, Says: "WithRestartPause: negative pause -1s"},
		{Opts: []Option{Items("x"), nil}, Says: "nil Option (option 2 of 2)"},
		// New's own checks, across options and its path.
		{Opts: []Option{Items("x"), ItemsFrom("/jobs")}, Says: "both Items and ItemsFrom"},
		{Opts: []Option{Items()}, Says: "no items"},
		{Opts: []Option{WithID("m")}, Says: "no items"},
		{Opts: []Option{ItemsFrom("/p")}, Says: `ItemsFrom("/p") is inside the partitioner's own path "/p"`},
		{Opts: []Option{ItemsFrom("/p/items")}, Says: "inside"},
	})
	for _, ok := range [][]Option{
		{Items("x"), Items("y"), WithID("m"), WithRestartPause(0)},
		{Items(), Items("x")},
		{ItemsFrom("/jobs")},
		{ItemsFrom("/pp")},
	} {
		pt, err := New(c, "/p", work, ok...)
		require.NoError(t, err)
		require.NotNil(t, pt)
	}
	_, err := New(c, "/p", work, ItemsFrom("jobs"))
	require.ErrorIs(t, err, framework.ErrInvalidPath, "the path's own error, wrapped")
}
