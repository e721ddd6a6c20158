package multilock

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/recipes/mutex"
	"github.com/zkrecipes/zkrecipes/recipes/semaphore"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// funcLock is a lock of a kind that cannot be compared.
type funcLock func() error

func (f funcLock) Acquire(context.Context) error { return f() }
func (f funcLock) Release(context.Context) error { return nil }

// Bad input gets the documented error, at once and naming the problem: never a
// panic or a hang, and nothing left on the server.
func TestBadInput(t *testing.T) {
	srv := zktest.NewServer(t)
	c := newClient(t, srv)
	ctx := testCtx(t)
	a, err := mutex.New(c, "/locks/a")
	require.NoError(t, err)
	s, err := semaphore.NewMutex(c, "/locks/s")
	require.NoError(t, err)

	t.Run("New", func(t *testing.T) {
		var typedNil *mutex.Mutex
		for _, tt := range []struct {
			name  string
			locks []Lock
			says  string
		}{
			{"no locks", nil, "no locks"},
			{"nil lock", []Lock{a, nil}, "lock 1 is nil"},
			{"typed nil", []Lock{typedNil, a}, "lock 0 is nil"},
			{"the same mutex twice", []Lock{a, s, a}, "lock 2 is lock 0 again"},
			// Not reentrant: its second Acquire would wait for its first.
			{"the same semaphore mutex twice", []Lock{s, s}, "lock 1 is lock 0 again"},
		} {
			m, err := New(tt.locks...)
			require.Nil(t, m, tt.name)
			require.ErrorIs(t, err, ErrInvalid, tt.name)
			require.ErrorContains(t, err, tt.says, tt.name)
		}
		f := funcLock(func() error { return nil })
		_, err := New(f, f)
		require.NoError(t, err, "a lock that cannot be compared is taken as given")
	})

	t.Run("NewMutexes", func(t *testing.T) {
		for _, paths := range [][]string{nil, {}} {
			_, err := NewMutexes(c, paths)
			require.ErrorIs(t, err, ErrInvalid)
			require.ErrorContains(t, err, "no paths")
		}
		zkrtest.CheckConstructor(t, ErrInvalid, c, func(c *framework.Client, p string) error {
			m, err := NewMutexes(c, []string{"/a", p})
			require.Nil(t, m)
			return err
		})
		_, err := NewMutexes(c, []string{"/b", "/a", "/b"})
		require.ErrorIs(t, err, ErrInvalid)
		require.ErrorContains(t, err, `path "/b" given twice`)
		_, err = NewMutexes(c, []string{"/a"}, mutex.WithID("x"), nil)
		require.ErrorIs(t, err, ErrInvalid)
		require.ErrorContains(t, err, "nil Option")
	})

	t.Run("release what is not held", func(t *testing.T) {
		m, err := NewMutexes(c, []string{"/locks/x", "/locks/y"})
		require.NoError(t, err)
		require.ErrorIs(t, m.Release(ctx), ErrNotHeld)
		require.NoError(t, m.Acquire(ctx))
		require.NoError(t, m.Release(ctx))
		require.ErrorIs(t, m.Release(ctx), ErrNotHeld, "a second Release")
		require.False(t, m.IsAcquired())
	})

	t.Run("an ended context", func(t *testing.T) {
		ended, cancel := context.WithCancel(ctx)
		cancel()
		m, err := NewMutexes(c, []string{"/ended/x", "/ended/y"})
		require.NoError(t, err)
		require.ErrorIs(t, m.Acquire(ended), context.Canceled)
		require.False(t, m.IsAcquired())
		require.Empty(t, zkrtest.Children(t, c, "/ended"), "nothing was sent")
	})

	t.Run("a closed client", func(t *testing.T) {
		m, err := NewMutexes(zkrtest.Closed(t, []string{srv.Addr()}), []string{"/closed/x", "/closed/y"})
		require.NoError(t, err)
		// No deadline: a hang would fail the test by its timeout.
		require.ErrorIs(t, m.Acquire(context.Background()), framework.ErrClosed)
		require.ErrorIs(t, m.Release(context.Background()), ErrNotHeld)
	})
}

// NewMutexes refuses what mutex.New refuses of its options: the error wraps both
// packages' ErrInvalid and names the option.
func TestBadOptions(t *testing.T) {
	c := zkrtest.Offline(t)
	zkrtest.CheckOptions(t, ErrInvalid, func(opts ...mutex.Option) error {
		m, err := NewMutexes(c, []string{"/a", "/b"}, opts...)
		require.Nil(t, m)
		if err != nil {
			require.ErrorIs(t, err, mutex.ErrInvalid)
		}
		return err
	}, []zkrtest.BadOption[mutex.Option]{
		{Opts: []mutex.Option{mutex.WithID("")}, Says: "WithID: empty id"},
		{Opts: []mutex.Option{mutex.WithRevocationListener(nil)}, Says: "WithRevocationListener: nil listener"},
		{Opts: []mutex.Option{mutex.WithID("x"), nil}, Says: "nil Option (option 2 of 2)"},
	})
}
