package discovery

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

// Before its client's first session, Register ends as the client's operations do:
// with a context that never ends, after one connection timeout, with a
// *framework.ConnectError wrapping framework.ErrNoServer, and nothing left behind;
// once the server is up, Register again registers.
func TestRegisterBeforeAFirstSession(t *testing.T) {
	srv, c := zkrtest.BeforeAFirstSession(t)
	d := newDiscovery(t, c)
	in := Instance{Name: "orders", ID: "go-1"}
	zkrtest.GivesUp(t, c, "discovery: register /services/orders/go-1: ", func(ctx context.Context) error {
		r, err := d.Register(ctx, in)
		if err == nil {
			_ = r.Close(ctx)
		}
		return err
	})

	zkrtest.ServerBack(t, srv, c)
	register(t, d, in)
	got, err := d.Instance(testCtx(t), "orders", "go-1")
	require.NoError(t, err)
	require.Equal(t, "go-1", got.ID)
}

// Before its client's first session, a provider's Start ends as the cache's does,
// and leaves the provider as it was before Start: once the server is up, Start
// again loads and follows the service (not ErrStarted).
func TestProviderStartBeforeAFirstSession(t *testing.T) {
	srv, c := zkrtest.BeforeAFirstSession(t)
	d := newDiscovery(t, c)
	p, err := d.NewProvider("orders")
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	zkrtest.GivesUp(t, c, "discovery: provider of /services/orders: ", p.Start)

	zkrtest.ServerBack(t, srv, c)
	require.NoError(t, p.Start(testCtx(t)), "Start may be tried again")
	register(t, d, Instance{Name: "orders", ID: "go-1"})
	sees(t, p, "go-1")
	require.ErrorIs(t, p.Start(testCtx(t)), ErrStarted)
}
