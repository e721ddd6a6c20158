package barrier

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

func TestBarrier(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	setter := newClient(t, []string{srv.Addr()})
	b, err := New(setter, "/barriers/deploy")
	require.NoError(t, err)
	require.NoError(t, b.Wait(ctx), "no barrier: Wait returns at once")

	require.NoError(t, b.Set(ctx))
	require.NoError(t, b.Set(ctx), "setting it twice is fine")
	data, stat, err := setter.Get(ctx, "/barriers/deploy")
	require.NoError(t, err)
	require.Zero(t, stat.EphemeralOwner, "persistent, as Curator's")
	require.Equal(t, localAddress(), data, "Curator's default data: the local address")

	var waits []<-chan error
	for range 3 {
		w, err := New(newClient(t, []string{srv.Addr()}), "/barriers/deploy")
		require.NoError(t, err)
		waits = append(waits, run(ctx, w.Wait))
	}
	for _, w := range waits {
		notYet(t, w, "Wait on a set barrier")
	}
	require.NoError(t, b.Remove(ctx))
	require.NoError(t, b.Remove(ctx), "removing it twice is fine")
	for _, w := range waits {
		require.NoError(t, <-w)
	}
}

func TestBarrierWaitEnds(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	b, err := New(c, "/barriers/held")
	require.NoError(t, err)
	require.NoError(t, b.Set(ctx))
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, b.Wait(short), context.DeadlineExceeded)

	closed := newClient(t, []string{srv.Addr()})
	w, err := New(closed, "/barriers/held")
	require.NoError(t, err)
	done := run(context.Background(), w.Wait)
	require.NoError(t, closed.Close())
	require.ErrorIs(t, <-done, framework.ErrClosed)
}

// A waiter waits through a server restart and through the loss of its session, and
// still hears the barrier go.
func TestBarrierWaitThroughFaults(t *testing.T) {
	srv := zktest.NewServer(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()}, framework.WithSessionTimeout(10*time.Second))
	b, err := New(c, "/barriers/faults")
	require.NoError(t, err)
	require.NoError(t, b.Set(ctx))

	waiterClient := newClient(t, []string{proxy.Addr()}, framework.WithSessionTimeout(2*time.Second))
	w, err := New(waiterClient, "/barriers/faults")
	require.NoError(t, err)
	done := run(ctx, w.Wait)

	srv.Stop()
	require.NoError(t, srv.Start())
	require.NoError(t, proxy.ExpireSession(ctx, 2*time.Second))
	require.NoError(t, waiterClient.WaitConnected(ctx))
	notYet(t, done, "Wait on a set barrier")
	require.NoError(t, b.Remove(ctx))
	require.NoError(t, <-done)
}
