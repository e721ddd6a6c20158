package attempt

import (
	"context"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zkrecipes/zkrecipes/framework"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type key struct{}

func TestCleanupContextOutlivesItsParent(t *testing.T) {
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	cancel()
	ctx, stop := CleanupContext(parent)
	defer stop()
	require.NoError(t, ctx.Err(), "the parent's end is not the cleanup's")
	require.Equal(t, "v", ctx.Value(key{}), "the parent's values are kept")
	_, bounded := ctx.Deadline()
	require.True(t, bounded)
}

// schedule is a BackOff that stops once, then pauses for nothing: a policy that has
// run out.
type schedule struct{ next, resets int }

func (s *schedule) NextBackOff() time.Duration {
	s.next++
	if s.next == 1 {
		return backoff.Stop
	}
	return 0
}

func (s *schedule) Reset() { s.resets++ }

type policy struct {
	s    *schedule
	made int
}

func (p *policy) NewBackOff() backoff.BackOff { p.made++; return p.s }

func TestPausesStartOverWhereThePolicyStops(t *testing.T) {
	s := &schedule{}
	pol := &policy{s: s}
	c, err := framework.New([]string{"127.0.0.1:1"}, framework.WithRetryPolicy(pol))
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()

	p := &Pauses{Client: c}
	p.Wait(context.Background(), nil)
	require.Equal(t, 1, s.resets, "the stopped policy started over")
	require.Equal(t, 2, s.next)
	p.Wait(context.Background(), nil)
	require.Equal(t, 1, pol.made, "one schedule until a reset")

	p.Reset()
	p.Wait(context.Background(), nil)
	require.Equal(t, 2, pol.made, "a reset asks the policy for a new schedule")
}

func TestPausesEndEarly(t *testing.T) {
	c, err := framework.New([]string{"127.0.0.1:1"}, framework.WithRetryPolicy(framework.RetryForever(time.Hour)))
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	p := &Pauses{Client: c}

	wake := make(chan struct{}, 1)
	wake <- struct{}{}
	p.Wait(context.Background(), wake) // would wait an hour

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p.Wait(ctx, nil)
}
