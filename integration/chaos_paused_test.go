package integration

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// pausedProcess is a holder process (integration/holder) on the mutex workload's path,
// beside its clients, that the fault schedule now and then stops with SIGSTOP for
// longer than its session timeout while it holds. Its holds join the mutex's record
// and its writes the mutex's register, so the checks hold it to what they hold the
// others to; after a pause it makes the write it had decided on before, which the
// fence must refuse if another has held since.
type pausedProcess struct {
	p       *holderProc
	w       *workload
	cc      *chaosClient // stands for the process in the record
	checker *framework.Client

	delays      []time.Duration // from SIGCONT to Lost, for each pause that cost the session
	late        int             // writes made after a pause
	lateRefused int
	violations  []string
}

// startPausedProcess starts the holder process on w's path (a mutex's), with the
// chaos clients' session timeout, connected to the servers directly: only server
// faults and its pauses reach it.
func startPausedProcess(t *testing.T, e *zktest.Ensemble, w *workload) *pausedProcess {
	p := startHolder(t, e.Addrs(), "mutex", w.path, chaosSessionTimeout, "-acquire", holderAcquire.String())
	checker, err := framework.New(e.Addrs(), framework.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	return &pausedProcess{p: p, w: w, cc: &chaosClient{name: "paused-process", timeout: chaosSessionTimeout}, checker: checker}
}

// close ends the process and the checker's session.
func (ph *pausedProcess) close() {
	ph.p.stop()
	_ = ph.checker.Close()
}

// run takes the lock again and again until ctx ends, pausing the process during a
// third of its holds.
func (ph *pausedProcess) run(ctx context.Context, f *faults, rng *rand.Rand, ids *idSource) {
	for pause(ctx, between(rng, 0, 200*time.Millisecond)) {
		if err := ph.p.tell("acquire"); err != nil {
			ph.fail("the holder process is gone: %v", err)
			return
		}
		line, err := ph.p.await(acquireAnswer(holderAcquire, ph.cc.timeout), "held ", "error ")
		if err != nil {
			ph.fail("%v", err)
			return
		}
		if strings.HasPrefix(line, "error ") {
			what := "acquire failed"
			if strings.Contains(line, context.DeadlineExceeded.Error()) {
				what = fmt.Sprintf("acquire timed out (%v)", holderAcquire)
			}
			ph.w.failure(what)
			continue
		}
		token, err := field(line, 1)
		if err != nil {
			ph.fail("%v", err)
			return
		}
		h := &hold{id: ids.next(), client: ph.cc, kind: "lock", node: strings.Fields(line)[2], token: token, start: time.Now()}
		ph.write(h)
		if rng.Float64() < 1.0/3 {
			ph.pause(f, h)
		} else {
			pause(context.Background(), between(rng, 5*time.Millisecond, 40*time.Millisecond))
			ph.write(h)
		}
		h.end = time.Now()
		ok, _, err := ph.checker.Exists(context.Background(), h.node)
		h.live = err == nil && ok
		if err := ph.p.tell("release"); err != nil {
			ph.fail("the holder process is gone: %v", err)
			return
		}
		if _, err := ph.p.await(time.Minute, "released", "error "); err != nil {
			ph.fail("%v", err)
			return
		}
		if l, ok := ph.p.take("lost "); ok && h.lostAt.IsZero() {
			if at, err := field(l, 1); err == nil && time.Unix(0, at).Before(h.end) {
				h.lostAt = time.Unix(0, at)
			}
		}
		ph.w.mu.Lock()
		ph.w.holds = append(ph.w.holds, h)
		ph.w.mu.Unlock()
	}
}

// write has the process write with its token, and takes the write to the register.
func (ph *pausedProcess) write(h *hold) bool {
	if ph.p.tell("write") != nil {
		return false
	}
	if _, err := ph.p.await(time.Minute, "write "); err != nil {
		ph.fail("%v", err)
		return false
	}
	return ph.w.register.write(h)
}

// pause stops the process for its session timeout and a second and a half, resumes
// it, has it make its late write, and waits for its Lost: that must come within the
// session timeout and a second when its node is gone, since its session then is.
func (ph *pausedProcess) pause(f *faults, h *hold) {
	f.count("holder process paused past its session")
	if ph.p.cmd.Process.Signal(syscall.SIGSTOP) != nil {
		return
	}
	f.note("holder process paused (SIGSTOP)")
	time.Sleep(ph.cc.timeout + 1500*time.Millisecond) // the pause itself: the fault
	f.note("holder process resumed (SIGCONT)")
	resumed := time.Now()
	_ = ph.p.cmd.Process.Signal(syscall.SIGCONT)
	ph.late++
	if !ph.write(h) {
		ph.lateRefused++
	}
	if l, err := ph.p.await(ph.cc.timeout+time.Second, "lost "); err == nil {
		if at, err := field(l, 1); err == nil {
			h.lostAt = time.Unix(0, at)
			ph.delays = append(ph.delays, h.lostAt.Sub(resumed))
		}
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), ph.cc.timeout)
	defer cancel()
	if ok, _, err := ph.checker.Exists(ctx, h.node); err == nil && !ok {
		ph.fail("%v: its node was gone after a pause and it did not hear Lost within the session timeout and a second of SIGCONT", h)
	}
}

// holderAcquire is how long the holder process waits for the lock when told to
// acquire; then it says so (error).
const holderAcquire = time.Minute

// acquireAnswer is how long to wait for a holder's answer to acquire, given how long
// it waits for the lock and its session timeout: longer than its own wait, by the
// time its Acquire may take to give up (deleting its node, bounded by a session
// timeout) and ten seconds for a loaded machine to schedule it. A wait no longer than
// its own raced it, and took a holder that timed out as one that said nothing.
func acquireAnswer(acquire, session time.Duration) time.Duration {
	return acquire + session + 10*time.Second
}

func (ph *pausedProcess) fail(format string, args ...any) {
	ph.violations = append(ph.violations, fmt.Sprintf(format, args...))
}

// String is the report's line on the paused process.
func (ph *pausedProcess) String() string {
	if ph == nil {
		return ""
	}
	return fmt.Sprintf("holder process paused past its session: %d times; Lost closed after SIGCONT %s; late writes refused by the fence: %d of %d\n",
		ph.late, spread(ph.delays), ph.lateRefused, ph.late)
}
