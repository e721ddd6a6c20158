package partition

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// Bad input gets the documented error at New, naming the problem.
func TestBadInput(t *testing.T) {
	srv := zktest.NewServer(t)
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
		{"bad id", work, []Option{Items("x"), WithID("a/b")}, "id"},
		{"empty id", work, []Option{Items("x"), WithID("")}, "id"},
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
