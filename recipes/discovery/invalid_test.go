package discovery

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

// Each option refuses a bad value at New and NewProvider, naming itself; so does a
// nil Option or ProviderOption. (TestBadInput checks the other arguments.)
func TestBadOptions(t *testing.T) {
	c := zkrtest.Offline(t)
	zkrtest.CheckOptions(t, ErrInvalid, func(opts ...Option) error {
		d, err := New(c, "/services", opts...)
		require.Nil(t, d)
		return err
	}, []zkrtest.BadOption[Option]{
		{Opts: []Option{WithLogger(nil)}, Says: "WithLogger: nil logger"},
		{Opts: []Option{WithLogger(slog.New(slog.DiscardHandler)), nil}, Says: "nil Option (option 2 of 2)"},
	})
	d, err := New(c, "/services", WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)

	zkrtest.CheckOptions(t, ErrInvalid, func(opts ...ProviderOption) error {
		p, err := d.NewProvider("s", opts...)
		require.Nil(t, p)
		return err
	}, []zkrtest.BadOption[ProviderOption]{
		{Opts: []ProviderOption{WithFilter(nil)}, Says: "WithFilter: nil filter"},
		{Opts: []ProviderOption{DownAfter(0, time.Second)}, Says: "DownAfter: errors (0) and forget (1s) must be positive"},
		{Opts: []ProviderOption{DownAfter(-1, time.Second)}, Says: "DownAfter: errors (-1)"},
		{Opts: []ProviderOption{DownAfter(1, 0)}, Says: "DownAfter: errors (1) and forget (0s) must be positive"},
		{Opts: []ProviderOption{DownAfter(1, -time.Second)}, Says: "DownAfter: "},
		{Opts: []ProviderOption{Random(), Sticky(), RoundRobin(), nil}, Says: "nil ProviderOption (option 4 of 4)"},
	})
	p, err := d.NewProvider("s", Sticky(), WithFilter(func(Instance) bool { return true }), DownAfter(1, time.Minute))
	require.NoError(t, err)
	require.NotNil(t, p)
}
