package partition

import (
	"errors"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/internal/instrument"
	"github.com/zkrecipes/zkrecipes/recipes/mutex"
)

// The changes of an item's ownership, the values of the change attribute.
const (
	changeAcquired = "acquired"
	changeReleased = "released"
	changeLost     = "lost" // its lock may have been lost before the release
)

// telemetry is a partitioner's: nil when its client measures nothing.
type telemetry struct {
	changes *instrument.Counter
	owned   *instrument.Gauge
}

func newTelemetry(c *framework.Client) *telemetry {
	r := instrument.New(c, "partition")
	if r == nil || !framework.Metering(c.ForRecipes().MeterProvider()) {
		return nil
	}
	return &telemetry{
		changes: r.Counter("zkrecipes.partition.ownership_changes",
			"Items a partitioner took (acquired) and gave up (released, or lost: its lock may have been lost first), by change.",
			"{change}", instrument.Attr{Key: "change", Values: []string{changeAcquired, changeReleased, changeLost}}),
		owned: r.Gauge("zkrecipes.partition.items_owned",
			"Items whose lock this process's partitioners hold now.", "{item}"),
	}
}

func (t *telemetry) acquired() {
	if t != nil {
		t.changes.Add(1, changeAcquired)
		t.owned.Add(1)
	}
}

// released counts the end of an ownership whose Release returned err.
func (t *telemetry) released(err error) {
	if t == nil {
		return
	}
	change := changeReleased
	if errors.Is(err, mutex.ErrLost) {
		change = changeLost
	}
	t.changes.Add(1, change)
	t.owned.Add(-1)
}
