package semaphore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// An uncontended lease is 6 requests: the internal lock's create and listing, the
// lease's create and listing, the lease's holder watch (a setWatches, as of the
// lease's czxid), the lock's delete. The internal lock's holder does not watch its
// node (issue 45 item 4). A listing sent with its create that reaches the server
// first is sent again.
func TestLeaseRequests(t *testing.T) {
	const create, del, getChildren2, setWatches = 1, 2, 12, 101
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	d := &zkrtest.LossyDialer{}
	c := zkrtest.Client(t, []string{srv.Addr()}, framework.WithDialer(d.Dial))
	for _, p := range []string{"/sem", "/sem/locks", "/sem/leases"} {
		_, err := c.Create(ctx, p, nil)
		require.NoError(t, err)
	}
	s := newSemaphore(t, c, "/sem", 2)

	d.Requests()
	leases, err := s.Acquire(ctx, 1)
	require.NoError(t, err)
	// The lease's holder watch is sent once the lease is held, not before Acquire
	// returns: count until it has gone.
	sent := map[int32]int{}
	require.Eventually(t, func() bool {
		for op, n := range d.Requests() {
			sent[op] += n
		}
		return sent[setWatches] >= 1
	}, wait, time.Millisecond, "the lease's holder watch")
	listings := sent[getChildren2]
	delete(sent, getChildren2)
	require.Equal(t, map[int32]int{create: 2, setWatches: 1, del: 1}, sent, "the lease's watch, and none on the lock")
	require.GreaterOrEqual(t, listings, 2)
	require.LessOrEqual(t, listings, 4)
	releaseAll(t, leases)
}
