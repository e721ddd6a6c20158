package discovery

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// A registered client's session expires: its instance is back under the new
// session with the latest Update's data, and the provider never knows it twice.
func TestRegisteredSessionExpiry(t *testing.T) {
	srv := zkrtest.Server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	c := newClient(t, []string{proxy.Addr()}, framework.WithSessionTimeout(2*time.Second))
	other := newClient(t, []string{srv.Addr()})
	ctx := testCtx(t)
	p, h := follow(t, newDiscovery(t, other), "s")
	in := Instance{Name: "s", ID: "one", Address: "v1"}
	r := register(t, newDiscovery(t, c), in)
	sees(t, p, "one")
	before := c.SessionID()

	proxy.Cut()
	in.Address = "v2"
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	require.ErrorIs(t, r.Update(short, in), context.DeadlineExceeded, "no connection: the data waits")
	cancel()
	proxy.Restore()
	require.NoError(t, proxy.ExpireSession(ctx, c.NegotiatedSessionTimeout()))
	require.NoError(t, c.WaitConnected(ctx))
	require.NotEqual(t, before, c.SessionID(), "a new session")

	require.Eventually(t, func() bool {
		got := p.Instances()
		return len(got) == 1 && got[0].Address == "v2"
	}, wait, 10*time.Millisecond, "the instance is back with the latest data")
	_, stat, err := other.Get(ctx, "/services/s/one")
	require.NoError(t, err)
	require.Equal(t, c.SessionID(), stat.EphemeralOwner)
	// The old node went with its session; the new one came with the new data.
	require.Equal(t, []string{"Added one", "Removed one", "Added one"}, brief(instanceEvents(h.get())))
}

// The provider's own session expires while the service changes: it reads the
// service again and reports only the differences, then Synced.
func TestProviderSessionExpiry(t *testing.T) {
	srv := zkrtest.Server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	c := newClient(t, []string{proxy.Addr()}, framework.WithSessionTimeout(2*time.Second))
	writer := newDiscovery(t, newClient(t, []string{srv.Addr()}))
	ctx := testCtx(t)
	a := register(t, writer, Instance{Name: "s", ID: "a", Address: "v1"})
	b := register(t, writer, Instance{Name: "s", ID: "b"})
	register(t, writer, Instance{Name: "s", ID: "same"})
	p, h := follow(t, newDiscovery(t, c), "s")
	sees(t, p, "a", "b", "same")
	n := len(h.get())

	expired := make(chan error, 1)
	go func() { expired <- proxy.ExpireSession(ctx, c.NegotiatedSessionTimeout()) }()
	h.waitFor(t, n, Suspended)
	require.NoError(t, a.Update(ctx, Instance{Name: "s", ID: "a", Address: "v2"}))
	require.NoError(t, b.Close(context.Background()))
	register(t, writer, Instance{Name: "s", ID: "c"})
	require.NoError(t, <-expired)
	lost := h.waitFor(t, n, Lost)
	synced := h.waitFor(t, lost, Synced)
	require.ElementsMatch(t, []string{"Updated a", "Removed b", "Added c"}, brief(h.get()[lost:synced-1]))
	require.Equal(t, []string{"a", "c", "same"}, ids(p.Instances()))
}

func instanceEvents(events []Event) []Event {
	var out []Event
	for _, e := range events {
		if e.Type == Added || e.Type == Updated || e.Type == Removed {
			out = append(out, e)
		}
	}
	return out
}
