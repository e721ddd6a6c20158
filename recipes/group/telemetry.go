package group

import (
	"path"
	"sync"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/cache"
	"github.com/zkrecipes/zkrecipes/recipes/internal/instrument"
)

// The changes of a group's membership, the values of the change attribute.
const (
	changeJoined  = "joined"
	changeLeft    = "left"
	changeUpdated = "updated" // a member's payload
)

// telemetry is a member's view of its group, measured: nil when its client measures
// nothing.
type telemetry struct {
	changes *instrument.Counter
	members *instrument.Gauge

	mu     sync.Mutex
	seen   int64 // members added to the gauge
	loaded bool  // the first list was loaded: later creations are joins
	closed bool
}

func newTelemetry(c *framework.Client) *telemetry {
	r := instrument.New(c, "group")
	if r == nil || !framework.Metering(c.ForRecipes().MeterProvider()) {
		return nil
	}
	return &telemetry{
		changes: r.Counter("zkrecipes.group.membership_changes",
			"Changes of a group seen by a Member after its first list: members joined, left, and payloads updated, by change.",
			"{change}", instrument.Attr{Key: "change", Values: []string{changeJoined, changeLeft, changeUpdated}}),
		members: r.Gauge("zkrecipes.group.members",
			"Members of their groups as this process's Members see them now, summed over its Members.", "{member}"),
	}
}

// heard follows the cache of the group at groupPath.
func (t *telemetry) heard(groupPath string) func(cache.Event) {
	return func(e cache.Event) {
		if e.Type == cache.Initialized {
			t.mu.Lock()
			t.loaded = true
			t.mu.Unlock()
			return
		}
		var delta int64
		change := changeUpdated
		switch e.Type {
		case cache.Created:
			delta, change = 1, changeJoined
		case cache.Deleted:
			delta, change = -1, changeLeft
		case cache.Changed:
		default:
			return
		}
		if path.Dir(e.Path) != groupPath {
			return // the group's own node
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.closed {
			return
		}
		t.seen += delta
		t.members.Add(delta)
		if t.loaded {
			t.changes.Add(1, change)
		}
	}
}

// close takes this member's view out of the gauge.
func (t *telemetry) close() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.members.Add(-t.seen)
	t.seen, t.closed = 0, true
}
