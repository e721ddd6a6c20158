package counter

import (
	"context"
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

// telemetry is a counter's: nil when its client measures and traces nothing.
type telemetry struct {
	recipe     *instrument.Recipe
	updates    *instrument.Durations
	promotions *instrument.Counter
}

func newTelemetry(c *framework.Client) *telemetry {
	r := instrument.New(c, "counter")
	if r == nil {
		return nil
	}
	return &telemetry{
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

func (t *telemetry) start(ctx context.Context, op, path string) instrument.Call {
	if t == nil {
		return instrument.Call{}
	}
	return t.recipe.Call(ctx, op, path)
}

// end ends a write that returned err; unchanged is CompareAndSet's false.
func (t *telemetry) end(c instrument.Call, unchanged bool, err error) {
	if t == nil {
		return
	}
	out := instrument.Outcome(err)
	switch {
	case errors.Is(err, ErrUnknownOutcome): // before ctx's error, which it may wrap too
		out = outcomeUnknown
	case errors.Is(err, ErrGaveUp):
		out = outcomeGaveUp
	case err == nil && unchanged:
		out = outcomeUnchanged
	}
	c.End(t.updates, out, err)
}

func (t *telemetry) promoted() {
	if t != nil {
		t.promotions.Add(1)
	}
}
