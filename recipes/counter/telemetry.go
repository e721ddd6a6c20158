package counter

import (
	"errors"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/internal/instrument"
)

// The operations and outcomes of the counter's telemetry.
const (
	opAdd = "add"
	opCAS = "compare_and_set"
	opSet = "set"

	outcomeUnchanged = "unchanged" // CompareAndSet found another value
	outcomeGaveUp    = "gave_up"   // ErrGaveUp
	outcomeUnknown   = "unknown"   // ErrUnknownOutcome
)

// telemetry is a counter's instruments: each nil, and free, when its client
// measures and traces nothing.
type telemetry struct {
	recipe     *instrument.Recipe
	updates    *instrument.Durations
	promotions *instrument.Counter
}

func newTelemetry(c *framework.Client) telemetry {
	r := instrument.New(c, "counter")
	return telemetry{
		recipe: r,
		updates: r.Durations("zkrecipes.counter.update.duration",
			"Writes of a counter (Add, CompareAndSet, Set) from the call to its return, by operation and outcome (ok, unchanged, gave_up, unknown, timed_out, cancelled, failed): the count is the number of calls.",
			instrument.Attr{Key: "operation", Values: []string{opAdd, opCAS, opSet}},
			instrument.Attr{Key: "outcome", Values: []string{instrument.OK, outcomeUnchanged, outcomeGaveUp, outcomeUnknown,
				instrument.TimedOut, instrument.Cancelled, instrument.Failed}}),
		promotions: r.Counter("zkrecipes.counter.promotions",
			"Writes of a counter that lost every optimistic try and were tried again under the PromotedToLock lock.", "{promotion}"),
	}
}

// outcome names how a write that returned err ended; unchanged is CompareAndSet's
// false.
func outcome(unchanged bool, err error) string {
	switch {
	case errors.Is(err, ErrUnknownOutcome): // before ctx's error, which it may wrap too
		return outcomeUnknown
	case errors.Is(err, ErrGaveUp):
		return outcomeGaveUp
	case err == nil && unchanged:
		return outcomeUnchanged
	}
	return instrument.Outcome(err)
}
