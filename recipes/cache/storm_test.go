package cache

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

// writes is what writers wrote: every (path, version, data) the server accepted.
type writes struct {
	mu  sync.Mutex
	set map[string]bool
}

func (w *writes) add(p string, version int32, data string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.set[fmt.Sprintf("%s@%d=%s", p, version, data)] = true
}

func (w *writes) has(n Node) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.set[fmt.Sprintf("%s@%d=%s", n.Path, n.Stat.Version, n.Data)]
}

// storm makes changes changes to the leaves among writers, each on its own client:
// sets, deletes, creates, and deletes and creates in one transaction.
func storm(t *testing.T, clients []*framework.Client, leaves []string, changes int, w *writes) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(clients))
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := testCtx(t)
			for j := range changes / len(clients) {
				p := leaves[rand.IntN(len(leaves))]
				data := fmt.Sprintf("w%d-%d", i, j)
				var err error
				switch r := rand.IntN(10); {
				case r < 6:
					var stat *framework.Stat
					if stat, err = c.Set(ctx, p, []byte(data), -1); err == nil {
						w.add(p, stat.Version, data)
					}
				case r < 8:
					err = c.Delete(ctx, p, -1)
				case r < 9:
					if _, err = c.Create(ctx, p, []byte(data)); err == nil {
						w.add(p, 0, data)
					}
				default:
					if _, err = c.Multi(ctx, framework.DeleteOp(p, -1), framework.CreateOp(p, []byte(data))); err == nil {
						w.add(p, 0, data)
					}
				}
				if err != nil && !errors.Is(err, framework.ErrNoNode) && !errors.Is(err, framework.ErrNodeExists) {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// stormTree makes /storm with 5 directories of 10 leaves each, and returns the leaves.
func stormTree(t *testing.T, c *framework.Client, w *writes) []string {
	t.Helper()
	create(t, c, "/storm", "")
	var leaves []string
	for d := range 5 {
		dir := fmt.Sprintf("/storm/d%d", d)
		create(t, c, dir, "")
		for n := range 10 {
			p := fmt.Sprintf("%s/n%d", dir, n)
			create(t, c, p, "init")
			w.add(p, 0, "init")
			leaves = append(leaves, p)
		}
	}
	return leaves
}

// requireWritten checks that every node the listener was told of carries data a
// writer wrote with that version.
func requireWritten(t *testing.T, h *history, w *writes) {
	t.Helper()
	for i, ev := range h.get() {
		n := ev.New
		if (ev.Type == Created || ev.Type == Changed) && len(n.Path) > len("/storm/d0") && !w.has(n) {
			t.Errorf("event %d: %v %s: data %q at version %d was never written", i, ev.Type, ev.Path, n.Data, n.Stat.Version)
		}
	}
}

func TestWriteStormIntoFiftyNodes(t *testing.T) {
	srv := zkrtest.Server(t)
	w := &writes{set: map[string]bool{}}
	setup := newClient(t, []string{srv.Addr()})
	leaves := stormTree(t, setup, w)
	ca, h := started(t, newClient(t, []string{srv.Addr()}), "/storm")
	require.Equal(t, 56, ca.Len())

	writers := make([]*framework.Client, 4)
	for i := range writers {
		writers[i] = newClient(t, []string{srv.Addr()})
	}
	storm(t, writers, leaves, 1000, w)
	requireConverges(t, ca, setup, math.MaxInt, true)
	h.requireClean(t)
	requireWritten(t, h, w)
	t.Logf("%d events for 1000 changes", len(h.get()))
}
