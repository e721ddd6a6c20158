package counter

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

// Bad input gets the documented error, at once and naming the problem: never a
// panic or a hang, and nothing written.
func TestBadInput(t *testing.T) {
	srv := zkrtest.Server(t)
	c := newClient(t, []string{srv.Addr()})
	ctx := testCtx(t)

	t.Run("New", func(t *testing.T) {
		zkrtest.CheckConstructor(t, ErrInvalid, c, func(c *framework.Client, p string) error {
			n, err := New(c, p)
			require.Nil(t, n)
			return err
		})
		for _, tc := range []struct {
			name string
			opt  Option
			want string
		}{
			{"nil option", nil, "nil Option"},
			{"nil retry policy", WithRetryPolicy(nil), "nil retry policy"},
			{"invalid retry policy", WithRetryPolicy(framework.RetryNTimes(-1, 0)), "RetryNTimes"},
			{"empty lock path", PromotedToLock(""), "lock path"},
			{"relative lock path", PromotedToLock("locks"), "lock path"},
			{"root lock path", PromotedToLock("/"), "root"},
			{"the counter's own path", PromotedToLock("/n"), "the counter's own"},
		} {
			n, err := New(c, "/n", tc.opt)
			require.Nil(t, n, tc.name)
			require.ErrorIs(t, err, ErrInvalid, tc.name)
			require.ErrorContains(t, err, tc.want, tc.name)
		}
	})

	t.Run("a node that is not a counter", func(t *testing.T) {
		for _, data := range [][]byte{nil, {1, 2, 3, 4}, []byte("123456789")} {
			_, err := c.Create(ctx, "/not-a-counter", data)
			require.NoError(t, err)
			n := newCounter(t, c, "/not-a-counter")
			_, err = n.Get(ctx)
			require.ErrorIs(t, err, ErrBadData)
			require.ErrorContains(t, err, "/not-a-counter holds")
			_, err = n.Add(ctx, 1)
			require.ErrorIs(t, err, ErrBadData)
			_, err = n.CompareAndSet(ctx, 0, 1)
			require.ErrorIs(t, err, ErrBadData)
			got, _, err := c.Get(ctx, "/not-a-counter")
			require.NoError(t, err)
			require.Equal(t, len(data), len(got), "left as it was")
			require.NoError(t, c.Delete(ctx, "/not-a-counter", -1))
		}
	})

	t.Run("closed client", func(t *testing.T) {
		n := newCounter(t, zkrtest.Closed(t, []string{srv.Addr()}), "/closed")
		_, err := n.Add(ctx, 1)
		require.ErrorIs(t, err, framework.ErrClosed)
		require.NotErrorIs(t, err, ErrUnknownOutcome, "nothing was sent")
		require.ErrorIs(t, n.Set(ctx, 1), framework.ErrClosed)
		_, err = n.Get(ctx)
		require.ErrorIs(t, err, framework.ErrClosed)
	})
}

// Each option refuses a bad value at New, naming itself; so does a nil Option.
func TestBadOptions(t *testing.T) {
	c := zkrtest.Offline(t)
	zkrtest.CheckOptions(t, ErrInvalid, func(opts ...Option) error {
		n, err := New(c, "/n", opts...)
		require.Nil(t, n)
		return err
	}, []zkrtest.BadOption[Option]{
		{Opts: []Option{WithRetryPolicy(nil)}, Says: "WithRetryPolicy: nil retry policy"},
		{Opts: []Option{WithRetryPolicy(framework.RetryNTimes(-1, 0))}, Says: "WithRetryPolicy: framework: invalid retry policy: RetryNTimes: n -1 < 0"},
		{Opts: []Option{PromotedToLock("")}, Says: "PromotedToLock: lock path"},
		{Opts: []Option{PromotedToLock("locks")}, Says: "PromotedToLock: lock path"},
		{Opts: []Option{PromotedToLock("/locks/")}, Says: "PromotedToLock: lock path"},
		{Opts: []Option{PromotedToLock("/")}, Says: "PromotedToLock: lock path: the path cannot be the root"},
		// The one check that needs New's path.
		{Opts: []Option{PromotedToLock("/n")}, Says: "PromotedToLock: the lock path /n is the counter's own"},
		{Opts: []Option{PromotedToLock("/lock"), nil}, Says: "nil Option (option 2 of 2)"},
	})
	_, err := New(c, "/n", PromotedToLock("locks"))
	require.ErrorIs(t, err, framework.ErrInvalidPath, "the path's own error, wrapped")
	n, err := New(c, "/n", WithRetryPolicy(framework.RetryNTimes(1, 0)), PromotedToLock("/lock"))
	require.NoError(t, err)
	require.NotNil(t, n)
}
