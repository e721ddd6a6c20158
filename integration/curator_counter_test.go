package integration

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/recipes/counter"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// Go counters and Curator's DistributedAtomicLongs add to the same node at once, with
// and without promotion to the same lock: the count ends at exactly the sum of the
// adds that each side reports as done, so both read and write the same 8 bytes and
// exclude each other under the lock.
func TestCounterGoAndJavaAddToTheExactSum(t *testing.T) {
	for _, lock := range []string{"", "/interop/counter-lock"} {
		t.Run(fmt.Sprintf("lock=%q", lock), func(t *testing.T) {
			srv := zktest.NewServer(t)
			ctx := testCtx(t)
			const perSide, adds = 2, 25
			var opts []counter.Option
			args := []string{"atomic", srv.Addr(), "/interop/atomic", strconv.Itoa(adds), "3"}
			if lock != "" {
				opts = append(opts, counter.WithRetryPolicy(framework.RetryNTimes(1, 0)), counter.PromotedToLock(lock))
				args = append(args, lock)
			}
			var javas []*zkrtest.CuratorPeer
			for range perSide {
				j := zkrtest.StartCuratorPeer(t, args...)
				j.Expect(t, "READY")
				javas = append(javas, j)
			}
			var (
				wg     sync.WaitGroup
				mu     sync.Mutex
				goSum  int64
				gaveUp int
			)
			for _, j := range javas {
				j.Send(t, "start")
			}
			for range perSide {
				n, err := counter.New(newClient(t, []string{srv.Addr()}), "/interop/atomic", opts...)
				require.NoError(t, err)
				wg.Go(func() {
					for range adds {
						_, err := n.Add(ctx, 2)
						mu.Lock()
						switch {
						case errors.Is(err, counter.ErrGaveUp):
							gaveUp++
						case err != nil:
							t.Error(err)
						default:
							goSum += 2
						}
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			var javaSum int64
			for _, j := range javas {
				var ok, failed int64
				_, err := fmt.Sscanf(j.Expect(t, "DONE "), "DONE %d %d", &ok, &failed)
				require.NoError(t, err)
				javaSum += 3 * ok
			}
			n, err := counter.New(newClient(t, []string{srv.Addr()}), "/interop/atomic")
			require.NoError(t, err)
			v, err := n.Get(ctx)
			require.NoError(t, err)
			require.Equal(t, goSum+javaSum, v, "Go added %d, Java %d", goSum, javaSum)
			require.NotZero(t, goSum)
			require.NotZero(t, javaSum)
			t.Logf("Go added %d (%d gave up), Java %d", goSum, gaveUp, javaSum)
		})
	}
}
