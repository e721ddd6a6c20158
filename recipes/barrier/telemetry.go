package barrier

import (
	"errors"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/internal/instrument"
)

// The operations of the barriers' telemetry, and the outcome of a Leave whose member
// node had gone (ErrLost).
const (
	opWait      = "wait"
	opEnter     = "enter"
	opLeave     = "leave"
	outcomeLost = "lost"
)

// telemetry is a barrier's instruments: each nil, and free, when its client
// measures and traces nothing.
type telemetry struct {
	recipe *instrument.Recipe
	waits  *instrument.Durations
}

// newTelemetry is the telemetry of recipe ("barrier", "double_barrier"), whose
// blocking calls are ops.
func newTelemetry(c *framework.Client, recipe string, ops ...string) telemetry {
	r := instrument.New(c, recipe)
	return telemetry{recipe: r, waits: r.Durations("zkrecipes.barrier.wait.duration",
		"Time blocked at a barrier (Barrier.Wait, Double.Enter, Double.Leave), by recipe (barrier, double_barrier), operation (wait, enter, leave) and outcome (ok, lost, timed_out, cancelled, failed).",
		instrument.Attr{Key: "operation", Values: ops},
		instrument.Attr{Key: "outcome", Values: []string{instrument.OK, outcomeLost, instrument.TimedOut, instrument.Cancelled, instrument.Failed}})}
}

// outcome names how a blocking call that returned err ended.
func outcome(err error) string {
	if errors.Is(err, ErrLost) {
		return outcomeLost
	}
	return instrument.Outcome(err)
}
