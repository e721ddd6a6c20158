package cache

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

// TestRebuiltEnsembleConverges replaces the server behind the caches' address by a
// fresh one, where the cached node and its children were made again, with lower
// czxids: each cache, on either kind of watch, empties its copy and loads the new
// tree, then says Synced, and its copy is the new server's tree; it follows the new
// server's changes from then on.
func TestRebuiltEnsembleConverges(t *testing.T) {
	ensemble := zkrtest.NewRebuilt(t)
	writer := newClient(t, []string{ensemble.Old.Addr()})
	for i := range 20 { // a history longer than the fresh server's will be
		create(t, writer, fmt.Sprintf("/filler%d", i), "")
	}
	create(t, writer, "/r", "")
	create(t, writer, "/r/a", "one")
	create(t, writer, "/r/b", "two")
	rebuilder := newClient(t, []string{ensemble.Fresh.Addr()})
	create(t, rebuilder, "/r", "")
	create(t, rebuilder, "/r/a", "one-again")
	create(t, rebuilder, "/r/c", "three")

	caches := make([]*Cache, len(watchModes))
	histories := make([]*history, len(watchModes))
	for i, mode := range watchModes {
		c := newClient(t, []string{ensemble.Addr()}, append(mode.opts, framework.WithSessionTimeout(time.Second))...)
		caches[i], histories[i] = started(t, c, "/r")
		requireConverges(t, caches[i], writer, math.MaxInt, true)
	}
	heard := make([]int, len(histories))
	for i, h := range histories {
		heard[i] = len(h.get())
	}
	ensemble.Rebuild()
	for i, mode := range watchModes {
		t.Run(mode.name, func(t *testing.T) {
			h := histories[i]
			lost := h.waitFor(t, heard[i], Lost)
			synced := h.waitFor(t, lost, Synced)
			requireConverges(t, caches[i], rebuilder, math.MaxInt, true)
			require.ElementsMatch(t, []string{"Deleted /r/a", "Deleted /r/b", "Deleted /r", "Created /r", "Created /r/a", "Created /r/c"},
				brief(nodeEvents(h.get()[lost:synced])))
		})
	}
	// The caches follow the new ensemble's changes: their watches are set there.
	set(t, rebuilder, "/r/a", "changed")
	create(t, rebuilder, "/r/d", "four")
	for i, mode := range watchModes {
		t.Run(mode.name+", changes after", func(t *testing.T) {
			requireConverges(t, caches[i], rebuilder, math.MaxInt, true)
			histories[i].requireClean(t)
		})
	}
}
