package integration

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// ensembleFault, in the server faults' turn, now and then cuts a server off from the
// other two (the leader half of the time) while clients still reach it, or stops two
// servers so that the quorum is lost; it reports whether it did one. Either lasts
// from half a second to a few seconds, and is undone before it returns.
func (f *faults) ensembleFault(ctx context.Context, rng *rand.Rand) bool {
	switch r := rng.Float64(); {
	case r < 0.2:
		i := f.target(rng, "server cut off from the others", "leader cut off from the others")
		f.e.Isolate(i)
		pause(ctx, between(rng, 500*time.Millisecond, 4*time.Second))
		f.note("healing server%d", i+1)
		if err := f.e.Heal(); err != nil {
			f.mu.Lock()
			f.err = fmt.Errorf("the partition would not heal: %w", err)
			f.mu.Unlock()
		}
		f.note("healed; leader: %s", f.leader())
		return true
	case r < 0.3:
		f.count("quorum lost (two servers stopped)")
		i := rng.IntN(3)
		j := (i + 1 + rng.IntN(2)) % 3
		f.e.Stop(i)
		f.e.Stop(j)
		f.note("quorum lost: server%d and server%d killed", i+1, j+1)
		pause(ctx, between(rng, 500*time.Millisecond, 4*time.Second))
		// The first back restores the quorum; Start waits until it serves. Both are
		// started whatever happens to the first, so that a failed start leaves a
		// quorum if it can.
		for _, k := range []int{i, j} {
			f.note("server%d starting", k+1)
			if err := f.start(k); err != nil {
				f.mu.Lock()
				f.err = errors.Join(f.err, fmt.Errorf("server %d would not start again after a lost quorum: %w", k, err))
				f.mu.Unlock()
				continue
			}
			f.note("server%d serving; leader: %s", k+1, f.leader())
		}
		return true
	}
	return false
}
