package framework

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// go-zookeeper/zk#35: after a reconnect, go-zookeeper reads the last zxid it saw to
// re-set its watches while its receive loop may already be recording the zxid of a
// reply on the new connection. With many watches to re-set and requests sent the
// moment the session is back, the race detector caught that in most runs of this test
// before the client held replies back (replyhold.go); without -race it shows nothing.
func TestReconnectWithWatchesAndRequestsInFlight(t *testing.T) {
	srv := zktest.NewServer(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	c := newClient(t, []string{proxy.Addr()}, WithSessionTimeout(longSession))
	ctx := testCtx(t)
	for i := range 2000 {
		_, _, _, err := c.ExistsW(ctx, fmt.Sprintf("/absent/%d", i))
		require.NoError(t, err)
	}
	log := listen(c)
	for round := range 3 {
		busy, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for busy.Err() == nil {
					_, _, _ = c.Exists(busy, "/")
				}
			}()
		}
		proxy.Cut()
		proxy.Restore()
		want := make([]ConnectionState, 0, 2*(round+1))
		for range round + 1 {
			want = append(want, Suspended, Reconnected)
		}
		log.waitFor(t, want...)
		stop()
		wg.Wait()
	}
}
