package cache

import (
	"strings"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/internal/instrument"
)

// telemetry is a cache's: nil when its client measures nothing. Its methods run on
// the loop.
type telemetry struct {
	recipe   *instrument.Recipe
	events   *instrument.Counter
	rebuilds *instrument.Durations
	lostAt   time.Time // when the Lost that a rebuild follows began; zero if none
}

// eventTypes are the values of the type attribute: EventType's names in lower case.
var eventTypes = func() []string {
	var out []string
	for t := Created; t <= Stopped; t++ {
		out = append(out, strings.ToLower(t.String()))
	}
	return out
}()

func newTelemetry(c *framework.Client) *telemetry {
	r := instrument.New(c, "cache")
	if r == nil || !framework.Metering(c.ForRecipes().MeterProvider()) {
		return nil
	}
	return &telemetry{
		recipe: r,
		events: r.Counter("zkrecipes.cache.events",
			"Events a cache emitted (those of the caches inside groups, shared values and counts and partitioners too), by type (created, changed, deleted, initialized, suspended, lost, synced, error).",
			"{event}", instrument.Attr{Key: "type", Values: eventTypes}),
		rebuilds: r.Durations("zkrecipes.cache.rebuild.duration",
			"Rebuilds of a cache's copy after a session loss, from Lost to the Synced that ends it: the count is the number of rebuilds."),
	}
}

// emitted counts ev, and times the rebuild that a Lost begins and a Synced ends.
func (t *telemetry) emitted(ev Event) {
	if t == nil {
		return
	}
	t.events.Add(1, eventTypes[ev.Type-Created])
	switch {
	case ev.Type == Lost && t.lostAt.IsZero():
		t.lostAt = t.recipe.Now()
	case ev.Type == Synced && !t.lostAt.IsZero():
		t.rebuilds.Since(t.lostAt)
		t.lostAt = time.Time{}
	}
}
