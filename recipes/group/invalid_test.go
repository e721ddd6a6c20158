package group

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

// Bad input gets the documented error, at once and naming the problem.
func TestBadInput(t *testing.T) {
	srv := zkrtest.Server(t)
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

// A nil Option is refused at New, naming its type (FixedPayload, the one option,
// takes no value).
func TestBadOptions(t *testing.T) {
	c := zkrtest.Offline(t)
	zkrtest.CheckOptions(t, ErrInvalid, func(opts ...Option) error {
		m, err := New(c, "/g", "id", nil, opts...)
		require.Nil(t, m)
		return err
	}, []zkrtest.BadOption[Option]{
		{Opts: []Option{FixedPayload(), nil}, Says: "nil Option (option 2 of 2)"},
	})
	m, err := New(c, "/g", "id", nil, FixedPayload())
	require.NoError(t, err)
	require.NotNil(t, m)
}
