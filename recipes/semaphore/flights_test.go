package semaphore

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// An uncontended lease is 6 requests in 4 round trips: the internal lock's create
// and listing, the lease's create and listing, the lease's holder watch, the lock's
// delete. The internal lock's holder does not watch its node (issue 45 item 4).
func TestLeaseFlights(t *testing.T) {
	const create, del, getData, getChildren2 = 1, 2, 4, 12
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	d := zkrtest.NewFlightDialer()
	c := zkrtest.Client(t, []string{srv.Addr()}, framework.WithDialer(d.Dial))
	for _, p := range []string{"/sem", "/sem/locks", "/sem/leases"} {
		_, err := c.Create(ctx, p, nil)
		require.NoError(t, err)
	}
	s := newSemaphore(t, c, "/sem", 2)
	t.Cleanup(d.Release)

	d.Hold()
	acquired := make(chan []*Lease, 1)
	go func() {
		leases, err := s.Acquire(ctx, 1)
		if err != nil {
			t.Error(err)
		}
		acquired <- leases
	}()
	sorted := func(ops []int32) []int32 { slices.Sort(ops); return ops }
	require.Equal(t, []int32{create, getChildren2}, sorted(d.Flight(t, 2)), "the lock's create and listing")
	require.Equal(t, []int32{create, getChildren2}, sorted(d.Flight(t, 2)), "the lease's create and listing")
	require.Equal(t, []int32{getData}, d.Flight(t, 1), "the lease's holder watch")
	require.Equal(t, []int32{del}, d.Flight(t, 1), "the lock's release")
	leases := <-acquired
	d.Release()
	releaseAll(t, leases)
}
