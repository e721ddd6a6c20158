package election

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// refereed wraps a lead function so that the referee sees every term.
func refereed(ref *referee, who string, s **Selector, lead func(ctx context.Context, term Term) error) func(ctx context.Context, term Term) error {
	return func(ctx context.Context, term Term) error {
		ref.lead(who, *s)
		defer ref.follow(who)
		return lead(ctx, term)
	}
}

func newSelector(t *testing.T, c *framework.Client, path, who string, ref *referee, lead func(ctx context.Context, term Term) error, opts ...Option) *Selector {
	t.Helper()
	var s *Selector
	s, err := NewSelector(c, path, refereed(ref, who, &s, lead), append(opts, WithID(who))...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

func untilDone(ctx context.Context, _ Term) error { <-ctx.Done(); return ctx.Err() }

func TestInterruptionHandsOver(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	ref := newReferee(t)
	a := newSelector(t, newClient(t, []string{srv.Addr()}), "/election/sel", "A", ref, untilDone)
	require.NoError(t, a.Start(ctx))
	require.Eventually(t, a.IsLeader, wait, 5*time.Millisecond)
	b := newSelector(t, newClient(t, []string{srv.Addr()}), "/election/sel", "B", ref, untilDone)
	require.NoError(t, b.Start(ctx))
	leader, err := b.Leader(ctx)
	require.NoError(t, err)
	require.Equal(t, "A", leader.ID)

	a.InterruptLeadership()
	require.Eventually(t, b.IsLeader, wait, 5*time.Millisecond, "B leads once A's term ended")
	require.False(t, a.IsLeader())
	require.Equal(t, 1, ref.termsOf("A"), "without requeue, A does not come back")
}

func TestAutoRequeueLeadsAgain(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	var terms atomic.Int32
	s := newSelector(t, newClient(t, []string{srv.Addr()}), "/election/auto", "A", newReferee(t),
		func(context.Context, Term) error { terms.Add(1); return nil }, AutoRequeue())
	require.NoError(t, s.Start(ctx))
	require.Eventually(t, func() bool { return terms.Load() >= 2 }, wait, 5*time.Millisecond)
	require.NoError(t, s.Close(ctx))
}

func TestRotatingLeadership(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	ref := newReferee(t)
	var mu sync.Mutex
	led := map[string]int{}
	var selectors []*Selector
	for i := range 5 {
		who := fmt.Sprint("S", i)
		s := newSelector(t, newClient(t, []string{srv.Addr()}), "/election/rotate", who, ref,
			func(context.Context, Term) error {
				mu.Lock()
				led[who]++
				mu.Unlock()
				return nil
			})
		selectors = append(selectors, s)
	}
	for round := 1; round <= 3; round++ {
		for _, s := range selectors {
			if round == 1 {
				require.NoError(t, s.Start(ctx))
			} else {
				require.NoError(t, s.Requeue())
			}
		}
		require.Eventually(t, func() bool {
			mu.Lock()
			defer mu.Unlock()
			total := 0
			for _, n := range led {
				total += n
			}
			return total == 5*round
		}, wait, 5*time.Millisecond)
		require.Eventually(t, func() bool {
			for _, s := range selectors {
				if s.IsLeader() {
					return false
				}
			}
			ps, err := selectors[0].Participants(ctx)
			return err == nil && len(ps) == 0
		}, wait, 5*time.Millisecond, "round %d is over", round)
		mu.Lock()
		for who, n := range led {
			require.Equal(t, round, n, "%s leads exactly once per round", who)
		}
		mu.Unlock()
	}
}

func TestSelectorLeaderSessionExpiry(t *testing.T) {
	srv := zkrtest.Server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	ctx := testCtx(t)
	ref := newReferee(t)
	ended := make(chan error, 1)
	victim := newSelector(t, newClient(t, []string{proxy.Addr()}, framework.WithSessionTimeout(2*time.Second)),
		"/election/sel-expiry", "victim", ref,
		func(ctx context.Context, _ Term) error { <-ctx.Done(); ended <- context.Cause(ctx); return nil })
	require.NoError(t, victim.Start(ctx))
	require.Eventually(t, victim.IsLeader, wait, 5*time.Millisecond)
	other := newSelector(t, newClient(t, []string{srv.Addr()}), "/election/sel-expiry", "other", ref, untilDone)
	require.NoError(t, other.Start(ctx))

	require.NoError(t, proxy.ExpireSession(ctx, 2*time.Second))
	select {
	case cause := <-ended:
		require.ErrorIs(t, cause, ErrLeadershipLost)
		require.ErrorIs(t, cause, ErrNotLeader, "the same check as a latch's loss")
	case <-time.After(wait):
		t.Fatal("the expired leader's ctx was not cancelled")
	}
	require.Eventually(t, other.IsLeader, wait, 5*time.Millisecond, "another leads")
}

func TestParticipantsAgree(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	ref := newReferee(t)
	var selectors []*Selector
	for i := range 10 {
		s := newSelector(t, newClient(t, []string{srv.Addr()}), "/election/parts", fmt.Sprint("P", i), ref, untilDone)
		require.NoError(t, s.Start(ctx))
		selectors = append(selectors, s)
	}
	require.Eventually(t, func() bool {
		ps, err := selectors[0].Participants(ctx)
		return err == nil && len(ps) == 10
	}, wait, 5*time.Millisecond)
	first, err := selectors[0].Participants(ctx)
	require.NoError(t, err)
	ids := map[string]bool{}
	leaders := 0
	for _, p := range first {
		ids[p.ID] = true
		if p.IsLeader {
			leaders++
		}
	}
	require.Len(t, ids, 10, "ids are unique")
	require.Equal(t, 1, leaders)
	for _, s := range selectors[1:] {
		ps, err := s.Participants(ctx)
		require.NoError(t, err)
		require.Equal(t, first, ps, "every member sees the same election")
	}
	leader, err := selectors[5].Leader(ctx)
	require.NoError(t, err)
	require.Equal(t, first[0], leader)
}

// TestLeadSeesItsTerm: lead is handed its participant id and its term's fencing
// token, the one the Selector reports while lead runs.
func TestLeadSeesItsTerm(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	type seen struct {
		term     Term
		reported int64
	}
	terms := make(chan seen, 2)
	var s *Selector
	s, err := NewSelector(newClient(t, []string{srv.Addr()}), "/election/term", func(_ context.Context, term Term) error {
		terms <- seen{term, s.FencingToken()}
		return nil
	}, WithID("replica-1"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	require.NoError(t, s.Start(ctx))
	first := <-terms
	require.Equal(t, "replica-1", first.term.ID)
	require.NotZero(t, first.term.FencingToken)
	require.Equal(t, first.reported, first.term.FencingToken, "the token lead gets is the Selector's")

	require.NoError(t, s.Requeue())
	second := <-terms
	require.Equal(t, second.reported, second.term.FencingToken)
	require.Greater(t, second.term.FencingToken, first.term.FencingToken, "a later term has a greater token")
}

// TestLeadContextCause: context.Cause of lead's ctx says which of the three endings
// ended the term, and only that one.
func TestLeadContextCause(t *testing.T) {
	srv := zkrtest.Server(t)
	causes := []error{ErrLeadershipLost, ErrInterrupted, ErrClosed}
	for _, tc := range []struct {
		name string
		end  func(ctx context.Context, s *Selector, proxy *zktest.Proxy)
		want error
	}{
		// The default error policy counts the Suspended state of a cut connection as
		// a loss.
		{"connection lost", func(_ context.Context, _ *Selector, proxy *zktest.Proxy) { proxy.Cut() }, ErrLeadershipLost},
		{"interrupted", func(_ context.Context, s *Selector, _ *zktest.Proxy) { s.InterruptLeadership() }, ErrInterrupted},
		{"closed", func(ctx context.Context, s *Selector, _ *zktest.Proxy) { _ = s.Close(ctx) }, ErrClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			proxy := zktest.NewProxy(t, srv.Addr())
			leading, ended := make(chan struct{}), make(chan error, 1)
			s, err := NewSelector(newClient(t, []string{proxy.Addr()}), "/election/cause", func(ctx context.Context, _ Term) error {
				close(leading)
				<-ctx.Done()
				ended <- context.Cause(ctx)
				return nil
			})
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close(context.Background()) })
			require.NoError(t, s.Start(ctx))
			<-leading
			tc.end(ctx, s, proxy)
			cause := <-ended
			proxy.Restore()
			for _, other := range causes {
				if other == tc.want {
					require.ErrorIs(t, cause, other)
				} else {
					require.NotErrorIs(t, cause, other)
				}
			}
			require.ErrorContains(t, cause, "/election/cause", "the cause names the election")
		})
	}
}

// A leader whose node another client deletes stops leading as soon as the deletion
// is heard: its lead's ctx ends saying so, and the next selector, on the same
// connection, leads only once the old one's IsLeader is false (the referee fails the
// test if two ever lead). With AutoRequeue the old one queues again with a new node:
// three participants, one lead running.
func TestSelectorWhoseNodeIsDeletedRequeues(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	c, op := newClient(t, []string{srv.Addr()}), newClient(t, []string{srv.Addr()})
	ref := newReferee(t)
	const p = "/election/deleted-selector"
	ended := make(chan error, 10)
	lead := func(ctx context.Context, _ Term) error {
		<-ctx.Done()
		ended <- context.Cause(ctx)
		return nil
	}
	var selectors []*Selector
	for i := range 3 {
		s := newSelector(t, c, p, fmt.Sprint(i), ref, lead, AutoRequeue())
		require.NoError(t, s.Start(ctx))
		selectors = append(selectors, s)
	}
	var leader Participant
	require.Eventually(t, func() bool {
		var err error
		leader, err = selectors[0].Leader(ctx)
		return err == nil && leading(selectors) == 1
	}, wait, 10*time.Millisecond)
	first := leaderIndex(selectors)

	zkrtest.DeleteHolder(t, op, leader.Node)
	cause := zkrtest.Receive(t, ended, "the old lead's end")
	require.ErrorIs(t, cause, ErrLeadershipLost)
	require.ErrorIs(t, cause, framework.ErrNoNode, "%v", cause)
	require.Eventually(t, func() bool {
		i := leaderIndex(selectors)
		return i >= 0 && i != first && leading(selectors) == 1 && len(children(t, op, p)) == 3
	}, wait, 10*time.Millisecond, "another leads, and the old one queues again")
	require.Equal(t, 2, ref.termsOf(fmt.Sprint(first))+ref.termsOf(fmt.Sprint(leaderIndex(selectors))), "two terms in all")
}

func leading(selectors []*Selector) (n int) {
	for _, s := range selectors {
		if s.IsLeader() {
			n++
		}
	}
	return n
}

func leaderIndex(selectors []*Selector) int {
	for i, s := range selectors {
		if s.IsLeader() {
			return i
		}
	}
	return -1
}
