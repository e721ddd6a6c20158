package discovery

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// strategy picks one of the usable instances, never an empty list. Each provider
// makes its own, so that its state (a counter, the sticky choice) is the provider's.
type strategy func(usable []*Instance) *Instance

// roundRobin takes each instance in turn. The counter is atomic, so concurrent
// callers share the turns fairly rather than all taking the same one.
func roundRobin() strategy {
	var next atomic.Uint64
	return func(usable []*Instance) *Instance {
		return usable[(next.Add(1)-1)%uint64(len(usable))]
	}
}

func random() strategy {
	return func(usable []*Instance) *Instance { return usable[rand.IntN(len(usable))] }
}

// sticky keeps the instance it took while it stays usable, then takes the next one
// round robin (Curator's StickyStrategy over its default).
func sticky() strategy {
	var (
		mu   sync.Mutex
		id   string
		held bool
	)
	next := roundRobin()
	return func(usable []*Instance) *Instance {
		mu.Lock()
		defer mu.Unlock()
		if held {
			for _, in := range usable {
				if in.ID == id {
					return in
				}
			}
		}
		in := next(usable)
		id, held = in.ID, true
		return in
	}
}
