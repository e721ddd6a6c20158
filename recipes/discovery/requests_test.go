package discovery

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

// What a registration and its unregistration cost, counted on the wire once a
// provider has seen each: the registrar creates its node and watches it (to put it
// back if it goes), then checks it is still its own and deletes it. The provider
// hears the creation on its persistent recursive watch and reads the node, and hears
// the deletion with no read of the node: Curator's count (create, getData, delete).
// (On 3.8, whose notifications carry no zxid, it also reads the service's node for
// its child fields, each time.) On
// one-shot watches (a server before 3.6) its watches fired, so it lists the service
// again (setting its child watch) and reads the node (its data watch, which also
// tells of the node's deletion).
func TestRequestsPerRegistration(t *testing.T) {
	const create, del, exists, getData, getChildren2 = 1, 2, 3, 4, 12
	for _, tc := range []struct {
		name         string
		opts         []framework.Option
		see, seeGone map[int32]int
	}{
		{"persistent watch", nil, map[int32]int{getData: 1}, map[int32]int{getData: 1}},
		{"one-shot watches", []framework.Option{framework.WithOneShotWatches()},
			map[int32]int{getChildren2: 1, getData: 1}, map[int32]int{getChildren2: 1, getData: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := zkrtest.Server(t)
			rd, pd := &zkrtest.LossyDialer{}, &zkrtest.LossyDialer{}
			registrar := newDiscovery(t, newClient(t, []string{srv.Addr()}, framework.WithDialer(rd.Dial)))
			popts := append([]framework.Option{framework.WithDialer(pd.Dial)}, tc.opts...)
			p, h := follow(t, newDiscovery(t, newClient(t, []string{srv.Addr()}, popts...)), "s")
			register(t, registrar, Instance{Name: "s", ID: "first"}) // the service's node exists from here
			sees(t, p, "first")
			rd.Requests()
			pd.Requests()

			r, err := registrar.Register(testCtx(t), Instance{Name: "s", ID: "one"})
			require.NoError(t, err)
			sees(t, p, "first", "one")
			n := h.waitFor(t, 0, Added)
			require.Equal(t, map[int32]int{create: 1, exists: 1}, rd.Requests(), "the registrar's, to register")
			see := tc.see
			if tc.opts == nil && strings.HasPrefix(srv.Version(), "3.8.") {
				// 3.8's notifications carry no zxid: the provider reads the service's
				// node again for its child fields (recipes/cache/persistent.go).
				see = map[int32]int{getData: 2}
			}
			require.Equal(t, see, pd.Requests(), "the provider's, to see it")
			require.NoError(t, r.Close(context.Background()))
			sees(t, p, "first")
			h.waitFor(t, n, Removed)
			require.Equal(t, map[int32]int{exists: 1, del: 1}, rd.Requests(), "the registrar's, to unregister")
			// The read of the deleted node may still be on its way when the listing has
			// told the provider: at most these, then.
			for op, n := range pd.Requests() {
				require.LessOrEqual(t, n, tc.seeGone[op], "the provider's, to see it go: op %d", op)
			}
		})
	}
}
