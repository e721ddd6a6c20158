package main

import (
	"context"
	"flag"
	"sync"
	"time"

	"github.com/zkrecipes/zkrecipes/recipes/election"
)

var electCmd = &command{
	name:     "elect",
	synopsis: "elect PATH [flags] -- CMD ARGS...",
	summary:  "run CMD only while this process leads an election (Curator's LeaderLatch)",
	help: `Joins the leader election at PATH (Curator's LeaderLatch: PATH/_c_<uuid>-latch-<seq>)
and runs CMD while this process leads; the others wait, showing who leads. CMD
gets ZKR_LOCK_PATH, ZKR_LOCK_NODE and ZKR_FENCING_TOKEN (which grows with every
term) in its environment, and the signals sent to zkr.

When CMD exits, zkr leaves the election and exits with CMD's code: another
process takes over. When leadership may be lost while CMD runs (the session
expired, or the connection dropped), CMD gets SIGTERM, SIGKILL after --grace, and
zkr exits 76; with --requeue it campaigns again instead, and runs CMD anew when it
leads again. CMD is required: without one, zkr elect exits 64.`,
	example: "  zkr elect /services/report-poller --requeue -- ./poller --every 30s",
	flags: func(fs *flag.FlagSet) func(*env, []string, []string, bool) int {
		o := &electOptions{}
		idFlag(fs, &o.id)
		graceFlag(fs, &o.grace)
		fs.BoolVar(&o.requeue, "requeue", false, "after losing leadership, campaign again instead of exiting 76 (default off)")
		return o.run
	},
}

type electOptions struct {
	id      string
	grace   time.Duration
	requeue bool
}

func (o *electOptions) run(e *env, pos, argv []string, dash bool) int {
	path, err := pathArg(pos, argv, dash, true)
	switch {
	case err != nil:
		return e.fail(err)
	case o.grace < 0:
		return e.fail(usageError("--grace cannot be negative"))
	}
	id := participantID(o.id)

	s, code := e.start()
	if s == nil {
		return code
	}
	defer s.close()
	latch, err := election.NewLatch(s.client, path, election.WithID(id))
	if err != nil {
		return s.fail(usageError("%v", err))
	}
	t := watchTerms(latch)
	defer t.stop()

	ctx, stop := s.interruptible(context.Background())
	err = latch.Start(ctx)
	if err == nil {
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
			defer cancel()
			_ = latch.Close(ctx) // our node goes: another process takes over at once
		}()
	}
	if sig := stop(); sig != 0 {
		return exitSignal + int(sig)
	}
	if err != nil {
		return s.fail(zkError("joining the election at %s: %v", path, err))
	}

	w := waitFor{path: path, what: "leadership of " + path}
	for {
		h, code := s.await(w, 0, func(ctx context.Context) (*held, error) {
			if err := latch.Await(ctx); err != nil {
				return nil, err
			}
			return t.begin(path), nil
		})
		if h == nil {
			return code
		}
		code, lost := s.hold(h, argv, o.grace)
		if !lost || !o.requeue {
			return code
		}
		s.notice("campaigning again for leadership of %s", path)
	}
}

// terms turns a latch's leadership changes into a held with a Lost channel per term.
type terms struct {
	latch *election.Latch
	stop  func()
	mu    sync.Mutex
	lost  chan struct{} // the current term's, closed when it ends
}

func watchTerms(l *election.Latch) *terms {
	t := &terms{latch: l}
	t.stop = l.Listen(func(leader bool) {
		if leader {
			return
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.lost != nil {
			close(t.lost)
			t.lost = nil
		}
	})
	return t
}

// begin starts a term once Await said we lead. If the latch lost leadership in
// between, the term is lost from the start. A loss after the check closes it
// through the listener, since listeners hear every change after the latch's state
// has changed.
func (t *terms) begin(path string) *held {
	lost := make(chan struct{})
	t.mu.Lock()
	if t.latch.IsLeader() {
		t.lost = lost
	} else {
		close(lost)
	}
	t.mu.Unlock()
	return &held{path: path, node: t.latch.Node(), token: t.latch.FencingToken(), lost: lost}
}
