package hold

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestContext(t *testing.T) {
	lost := errors.New("lost")
	a, b := make(chan struct{}), make(chan struct{})

	ctx, cancel := Context(context.Background(), lost, a, b)
	require.NoError(t, ctx.Err())
	close(b)
	<-ctx.Done()
	require.ErrorIs(t, context.Cause(ctx), lost, "any of the channels ends it")
	cancel()
	require.ErrorIs(t, context.Cause(ctx), lost, "the first cause stays")

	parent, stop := context.WithCancel(context.Background())
	ctx, cancel = Context(parent, lost, a)
	defer cancel()
	stop()
	<-ctx.Done()
	require.ErrorIs(t, context.Cause(ctx), context.Canceled, "the parent's end")

	ctx, cancel = Context(context.Background(), lost, a)
	cancel()
	require.ErrorIs(t, context.Cause(ctx), context.Canceled)
	// goleak (TestMain) checks that cancel stopped the watching goroutines.
}

// A context of a hold that has gone already has ended when Context returns: a caller
// that checks its Err at once never works without the hold.
func TestContextOfAHoldGoneHasEndedAtOnce(t *testing.T) {
	lost := errors.New("lost")
	open, closed := make(chan struct{}), make(chan struct{})
	close(closed)
	for range 1000 {
		ctx, cancel := Context(context.Background(), lost, open, closed)
		require.Error(t, ctx.Err())
		require.ErrorIs(t, context.Cause(ctx), lost)
		cancel()
	}
}
