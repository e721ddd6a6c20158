package discovery

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// What a registration and its unregistration cost, counted on the wire once a
// provider has seen each: the registrar creates its node and watches it (to put it
// back if it goes), then checks it is still its own and deletes it; the provider,
// whose one-shot watches fired, lists the service again (setting its child watch)
// and reads the node (its data watch, which also tells of the node's deletion).
// Curator needs fewer (create, getData, delete) only through a persistent recursive
// watch, which go-zookeeper cannot set.
func TestRequestsPerRegistration(t *testing.T) {
	srv := zktest.NewServer(t)
	rd, pd := &zkrtest.LossyDialer{}, &zkrtest.LossyDialer{}
	registrar := newDiscovery(t, newClient(t, []string{srv.Addr()}, framework.WithDialer(rd.Dial)))
	p, h := follow(t, newDiscovery(t, newClient(t, []string{srv.Addr()}, framework.WithDialer(pd.Dial))), "s")
	register(t, registrar, Instance{Name: "s", ID: "first"}) // the service's node exists from here
	sees(t, p, "first")
	rd.Requests()
	pd.Requests()

	r, err := registrar.Register(testCtx(t), Instance{Name: "s", ID: "one"})
	require.NoError(t, err)
	sees(t, p, "first", "one")
	n := h.waitFor(t, 0, Added)
	const create, del, exists, getData, getChildren2 = 1, 2, 3, 4, 12
	require.Equal(t, map[int32]int{create: 1, exists: 1}, rd.Requests(), "the registrar's, to register")
	require.Equal(t, map[int32]int{getChildren2: 1, getData: 1}, pd.Requests(), "the provider's, to see it")
	require.NoError(t, r.Close(context.Background()))
	sees(t, p, "first")
	h.waitFor(t, n, Removed)
	require.Equal(t, map[int32]int{exists: 1, del: 1}, rd.Requests(), "the registrar's, to unregister")
	// The read of the deleted node may still be on its way when the listing has told
	// the provider: at most these, then.
	for op, n := range pd.Requests() {
		require.LessOrEqual(t, n, map[int32]int{getChildren2: 1, getData: 1}[op], "the provider's, to see it go: op %d", op)
	}
}
