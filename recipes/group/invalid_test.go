package group

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// Bad input gets the documented error, at once and naming the problem.
func TestBadInput(t *testing.T) {
	srv := zktest.NewServer(t)
	c := newClient(t, []string{srv.Addr()})
	zkrtest.CheckConstructor(t, ErrInvalid, c, func(c *framework.Client, p string) error {
		m, err := New(c, p, "id", nil)
		require.Nil(t, m)
		return err
	})
	for _, id := range []string{"", "a/b", ".", "..", "x\x00"} {
		m, err := New(c, "/g", id, nil)
		require.Nil(t, m)
		require.ErrorIs(t, err, ErrInvalid, "%q", id)
		require.ErrorContains(t, err, "id")
	}
}
