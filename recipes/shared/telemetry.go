package shared

import (
	"errors"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/internal/instrument"
)

// The operations and outcomes of the shared value's and count's telemetry.
const (
	opSet    = "set"
	opTrySet = "try_set"

	outcomeRefused = "refused" // TrySet: another writer took the version
	outcomeUnknown = "unknown" // ErrUnknownOutcome
)

// telemetry is a Value's or a Count's instruments: each nil, and free, when its
// client measures and traces nothing.
type telemetry struct {
	recipe *instrument.Recipe
	writes *instrument.Durations
}

// newTelemetry is the telemetry of recipe: "shared_value" or "shared_count".
func newTelemetry(c *framework.Client, recipe string) telemetry {
	r := instrument.New(c, recipe)
	return telemetry{recipe: r, writes: r.Durations("zkrecipes.shared.write.duration",
		"Writes of a shared value or count (Set, TrySet) from the call to its return, by recipe (shared_value, shared_count), operation (set, try_set) and outcome (ok, refused, unknown, timed_out, cancelled, failed): the count is the number of calls.",
		instrument.Attr{Key: "operation", Values: []string{opSet, opTrySet}},
		instrument.Attr{Key: "outcome", Values: []string{instrument.OK, outcomeRefused, outcomeUnknown,
			instrument.TimedOut, instrument.Cancelled, instrument.Failed}})}
}

// outcome names how a write that returned err ended; refused is TrySet's false.
func outcome(refused bool, err error) string {
	switch {
	case errors.Is(err, ErrUnknownOutcome): // before ctx's error, which it may wrap too
		return outcomeUnknown
	case err == nil && refused:
		return outcomeRefused
	}
	return instrument.Outcome(err)
}
