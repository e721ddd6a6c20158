package nodes

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

// Bad input gets the documented error, at once and naming the problem: never a
// panic or a hang, and nothing left on the server.
func TestBadInput(t *testing.T) {
	srv := zkrtest.Server(t)
	c := newClient(t, []string{srv.Addr()})
	ctx := testCtx(t)

	t.Run("constructor", func(t *testing.T) {
		zkrtest.CheckConstructor(t, ErrInvalid, c, func(c *framework.Client, p string) error {
			_, err := New(c, p, nil)
			return err
		})
		for _, tc := range []struct {
			opts []Option
			says string
		}{
			{[]Option{nil}, "nil Option"},
			{[]Option{Ephemeral(), Persistent()}, "Ephemeral with Persistent"},
			{[]Option{Ephemeral(), TTL(time.Hour)}, "Ephemeral with Persistent or TTL"},
			{[]Option{TTL(0)}, "TTL 0s"},
			{[]Option{TTL(-time.Second)}, "TTL -1s"},
			{[]Option{TTL(1 << 62)}, "TTL"},
			{[]Option{Sequential()}, "Sequential needs Protected"},
		} {
			p, err := New(c, "/n", nil, tc.opts...)
			require.Nil(t, p)
			require.ErrorIs(t, err, ErrInvalid)
			require.ErrorContains(t, err, tc.says)
		}
	})

	t.Run("out of turn", func(t *testing.T) {
		p := newNode(t, c, "/turns/node", nil)
		require.NoError(t, p.SetData(ctx, []byte("before start")), "sets the data Start uses")
		require.NoError(t, p.Start(ctx))
		require.ErrorIs(t, p.Start(ctx), ErrStarted)
		nodeIs(t, c, "/turns/node", "before start", c.SessionID)
		require.NoError(t, p.Close(ctx))
		require.NoError(t, p.Close(ctx), "a second Close")
		gone(t, c, "/turns/node")

		unstarted := newNode(t, c, "/turns/unstarted", nil)
		require.NoError(t, unstarted.Close(ctx), "closing a node never started")
		require.ErrorIs(t, unstarted.Start(ctx), ErrClosed)
	})

	t.Run("an ended context", func(t *testing.T) {
		ended, cancel := context.WithCancel(ctx)
		cancel()
		p := newNode(t, c, "/ended/node", nil)
		require.ErrorIs(t, p.Start(ended), context.Canceled)
		gone(t, c, "/ended/node")
		require.NoError(t, p.Start(ctx), "a Start that failed may be tried again")
		require.NoError(t, p.Close(ctx))
	})

	t.Run("too much data", func(t *testing.T) {
		p := newNode(t, c, "/big/node", make([]byte, 2<<20))
		require.ErrorIs(t, p.Start(ctx), framework.ErrDataTooLarge)
		require.Empty(t, p.Path())
	})

	t.Run("a closed client", func(t *testing.T) {
		closed := zkrtest.Closed(t, []string{srv.Addr()})
		p := newNode(t, closed, "/closed/node", nil)
		// No deadline: a hang would fail the test by its timeout.
		require.ErrorIs(t, p.Start(context.Background()), framework.ErrClosed)
		require.NoError(t, p.Close(context.Background()))
	})
}

// Each option refuses a bad value at New, naming itself; so does a nil Option.
// Options that contradict each other are refused too, naming both.
func TestBadOptions(t *testing.T) {
	c := zkrtest.Offline(t)
	zkrtest.CheckOptions(t, ErrInvalid, func(opts ...Option) error {
		p, err := New(c, "/n", nil, opts...)
		require.Nil(t, p)
		return err
	}, []zkrtest.BadOption[Option]{
		{Opts: []Option{TTL(0)}, Says: "TTL 0s is not between 1ms and"},
		{Opts: []Option{TTL(-time.Second)}, Says: "TTL -1s is not between 1ms and"},
		{Opts: []Option{TTL(time.Millisecond - 1)}, Says: "TTL 999.999µs is not between 1ms and"},
		{Opts: []Option{TTL(maxTTL + time.Millisecond)}, Says: "TTL 305419h53m47.776s is not between"},
		// Refused at the option, before the contradiction with Ephemeral.
		{Opts: []Option{Ephemeral(), TTL(0)}, Says: "TTL 0s"},
		{Opts: []Option{Persistent(), Protected(), Sequential(), ReadOnly(), nil}, Says: "nil Option (option 5 of 5)"},
		{Opts: []Option{Ephemeral(), Persistent()}, Says: "Ephemeral with Persistent"},
		{Opts: []Option{Sequential()}, Says: "Sequential needs Protected"},
	})
	for _, ttl := range []time.Duration{time.Millisecond, maxTTL} {
		p, err := New(c, "/n", nil, TTL(ttl))
		require.NoError(t, err, ttl)
		require.NotNil(t, p)
	}
}
