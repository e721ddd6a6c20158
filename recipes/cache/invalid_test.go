package cache

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

// Bad input gets the documented error or no-op, at once: never a panic or a hang.
func TestBadInput(t *testing.T) {
	srv := zkrtest.Server(t)
	c := newClient(t, []string{srv.Addr()})

	_, err := New(nil, "/a")
	require.ErrorIs(t, err, ErrInvalid)
	require.ErrorContains(t, err, "nil client")
	for _, p := range zkrtest.BadPaths {
		if p == "/" {
			continue // the root is a tree like any other
		}
		_, err := New(c, p)
		require.ErrorIs(t, err, ErrInvalid, "%q", p)
		require.ErrorIs(t, err, framework.ErrInvalidPath, "%q", p)
	}
	ca, err := New(c, "/a")
	require.NoError(t, err)
	require.NoError(t, ca.Close(context.Background()), "Close before Start")
	require.ErrorIs(t, ca.Start(context.Background()), ErrClosed)
	require.NoError(t, ca.Close(context.Background()), "Close is idempotent")
	stop := ca.Listen(func(Event) { t.Error("a closed cache delivers nothing") })
	stop()
	ca.Listen(nil)()

	ca, err = New(c, "/", Depth(1))
	require.NoError(t, err)
	t.Cleanup(func() { _ = ca.Close(context.Background()) })
	require.NoError(t, ca.Start(testCtx(t)))
	require.ErrorIs(t, ca.Start(testCtx(t)), ErrStarted)
	_, ok := ca.Get("/zookeeper")
	require.True(t, ok, "the root's children")
	for _, p := range []string{"", "zookeeper", "/zookeeper/", "/nowhere", "/zookeeper/config"} {
		_, ok := ca.Get(p)
		require.False(t, ok, "%q", p)
		require.Nil(t, ca.Children(p), "%q", p)
	}

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	late, err := New(c, "/late")
	require.NoError(t, err)
	require.ErrorIs(t, late.Start(cancelled), context.Canceled, "Start stops with its context")
	require.NoError(t, late.Close(context.Background()))
}

// A listener may close its cache, and stop itself, without a deadlock.
func TestCloseAndStopFromAListener(t *testing.T) {
	srv := zkrtest.Server(t)
	c := newClient(t, []string{srv.Addr()})
	ca, err := New(c, "/")
	require.NoError(t, err)
	var stop func()
	stop = ca.Listen(func(Event) { stop() })
	closed := make(chan struct{})
	ca.Listen(func(ev Event) {
		if ev.Type == Initialized {
			require.NoError(t, ca.Close(context.Background()))
			close(closed)
		}
	})
	err = ca.Start(testCtx(t))
	require.True(t, err == nil || errors.Is(err, ErrClosed), "%v", err)
	<-closed
	require.NoError(t, ca.Close(context.Background()))
	require.Positive(t, ca.Len(), "the copy stays")
}

// Each option refuses a bad value at New, naming itself; so does a nil Option.
func TestBadOptions(t *testing.T) {
	c := zkrtest.Offline(t)
	zkrtest.CheckOptions(t, ErrInvalid, func(opts ...Option) error {
		ca, err := New(c, "/a", opts...)
		require.Nil(t, ca)
		return err
	}, []zkrtest.BadOption[Option]{
		{Opts: []Option{Depth(-1)}, Says: "Depth: -1 is negative"},
		{Opts: []Option{WithSelector(nil)}, Says: "WithSelector: nil selector"},
		{Opts: []Option{Depth(0), WithoutData(), TrustReadOnly(), nil}, Says: "nil Option (option 4 of 4)"},
	})
	ca, err := New(c, "/a", Depth(0), WithoutData(), TrustReadOnly(), WithSelector(func(string) bool { return true }))
	require.NoError(t, err)
	require.NotNil(t, ca)
}
