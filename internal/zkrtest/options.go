package zkrtest

import (
	"log/slog"
	"reflect"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
)

// Offline is a client of no server (nothing listens on its address), closed at the
// end of the test: enough for a constructor, which checks its arguments and sends
// nothing.
func Offline(t testing.TB) *framework.Client {
	t.Helper()
	c, err := framework.New([]string{"127.0.0.1:1"}, framework.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// BadOption is options a constructor must refuse, and what its error must say.
type BadOption[O any] struct {
	Opts []O
	Says string // the option's name and the problem
}

// CheckOptions checks that a recipe's constructor refuses a nil option, and each of
// bad, with an error that wraps invalid (the recipe's ErrInvalid) and says what is
// wrong, naming the option. construct calls the constructor with the options given
// and valid other arguments, and returns its error. O is the recipe's option type,
// whose name a nil option's error gives ("nil Option").
func CheckOptions[O any](t testing.TB, invalid error, construct func(...O) error, bad []BadOption[O]) {
	t.Helper()
	var none O
	nilName := "nil " + reflect.TypeFor[O]().Name()
	bad = append(slices.Clip(bad), BadOption[O]{Opts: []O{none}, Says: nilName + " (option 1 of 1)"})
	for _, b := range bad {
		err := construct(b.Opts...)
		require.ErrorIs(t, err, invalid, b.Says)
		require.ErrorContains(t, err, b.Says)
	}
}
