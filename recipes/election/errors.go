package election

import (
	"errors"
	"fmt"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/zkrecipes/recipes/internal/lifecycle"
	"github.com/zkrecipes/zkrecipes/recipes/internal/lockqueue"
)

var (
	// ErrNoLeader is returned by Leader when nobody takes part in the election.
	ErrNoLeader = errors.New("election: no leader")
	// ErrClosed is returned after Close, and is the context.Cause of a Selector's
	// lead ctx that Close ended; ErrStarted is returned by a second Start. (A closed
	// client's errors wrap framework.ErrClosed instead.)
	ErrStarted, ErrClosed = lifecycle.Errors("election")
	// ErrNotStarted is returned by calls that need Start first.
	ErrNotStarted = errors.New("election: not started")
	// ErrInvalid is wrapped by the errors for bad arguments.
	ErrInvalid = errors.New("election: invalid argument")
	// ErrNotLeader is the context.Cause of a leadership context (Latch.Context, a
	// Selector's lead) that ended because leadership may have been lost, or was
	// never held.
	ErrNotLeader = errors.New("election: not the leader")
	// ErrLeadershipLost is the context.Cause of a Selector's lead ctx that ended
	// because leadership may have been lost: the error policy counted a connection
	// state as an error, the session ended, or our node was deleted. It wraps
	// ErrNotLeader, the cause a Latch's Context gives for the same loss, so that one
	// check serves both.
	ErrLeadershipLost = fmt.Errorf("%w: leadership lost", ErrNotLeader)
	// ErrInterrupted is the context.Cause of a Selector's lead ctx that
	// InterruptLeadership ended.
	ErrInterrupted = errors.New("election: leadership interrupted")
)

// Participant is one member of an election, in queue order.
type Participant struct {
	ID, Node string
	IsLeader bool
	// FencingToken is the participant's node's czxid: its token while it leads.
	FencingToken int64
}

// Option configures a Latch or a Selector. An option given a value it cannot take
// makes NewLatch or NewSelector return an error wrapping ErrInvalid that names the
// option.
type Option func(*options) error

type options struct {
	id            string
	autoRequeue   bool
	notifyOnClose bool
}

// WithID sets the participant id stored as the node's data. Default "host:pid". An
// empty id is refused.
func WithID(id string) Option {
	return func(o *options) error { return args.SetID(&o.id, id) }
}

// AutoRequeue makes a Selector enter the election again after each term. Default off:
// one term per Start or Requeue.
func AutoRequeue() Option {
	return func(o *options) error {
		o.autoRequeue = true
		return nil
	}
}

// NotifyOnClose makes a Latch's listeners hear false when Close ends its leadership.
// Default off: Close is silent, as Curator's default CloseMode.
func NotifyOnClose() Option {
	return func(o *options) error {
		o.notifyOnClose = true
		return nil
	}
}

func participants(ps []lockqueue.Participant) []Participant {
	out := make([]Participant, len(ps))
	for i, p := range ps {
		out[i] = Participant{ID: p.ID, Node: p.Node, IsLeader: p.Holder, FencingToken: p.FencingToken}
	}
	return out
}

func leader(ps []lockqueue.Participant) (Participant, error) {
	for _, p := range ps {
		if p.Holder {
			return Participant{ID: p.ID, Node: p.Node, IsLeader: true, FencingToken: p.FencingToken}, nil
		}
	}
	return Participant{}, ErrNoLeader
}

func newOptions(c *framework.Client, path string, opts []Option) (options, error) {
	o := options{id: args.DefaultID()}
	if err := args.Check(c, path); err != nil {
		return o, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := args.Apply(&o, opts); err != nil {
		return o, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return o, nil
}

func isNoNode(err error) bool { return errors.Is(err, framework.ErrNoNode) }
