package integration

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/integration/internal/holds"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// pausedSession is the paused holder's session timeout: the server's shortest but
// one, so that the pause outlasts it quickly.
const pausedSession = time.Second

// A holder in a process of its own is stopped (SIGSTOP) for longer than its session
// timeout, which a stop-the-world pause or a VM migration can do: another process
// takes the hold meanwhile and writes to the fenced register. When the paused one
// resumes (SIGCONT), it makes the write it had decided on before the pause; the
// register refuses it, as its token is below its successor's. And it hears of its
// loss: Lost closes, a moment after the resumption.
func TestPausedHolder(t *testing.T) {
	srv := zktest.NewServer(t)
	for _, policy := range []string{"standard", "session"} {
		for _, recipe := range holds.Recipes {
			t.Run(policy+"/"+recipe, func(t *testing.T) {
				delay := pausedHolder(t, []string{srv.Addr()}, recipe, "/paused/"+policy+"/"+recipe, "-policy", policy)
				t.Logf("%s error policy, %s: Lost closed %v after SIGCONT", policy, recipe, delay)
			})
		}
	}
}

// pausedHolder plays the scenario on servers and returns how long after SIGCONT
// the paused holder's Lost closed.
func pausedHolder(t *testing.T, servers []string, recipe, path string, flags ...string) time.Duration {
	ctx := testCtx(t)
	p := startHolder(t, servers, recipe, path, pausedSession, flags...)
	p.send(t, "acquire")
	paused := &hold{client: &chaosClient{name: "paused"}, kind: recipe, token: number(t, p.expect(t, "held "), 1)}
	reg := &fencedRegister{}
	p.send(t, "write")
	require.Equal(t, paused.token, number(t, p.expect(t, "write "), 1))
	require.True(t, reg.write(paused))

	p.signal(t, syscall.SIGSTOP)
	// Another takes the hold once the server has expired the paused one's session.
	c := newClient(t, servers)
	next, err := contend(ctx, c, recipe, path)
	require.NoError(t, err)
	successor := &hold{client: &chaosClient{name: "successor"}, kind: recipe, token: next.FencingToken()}
	require.True(t, reg.write(successor))

	resumed := time.Now()
	p.signal(t, syscall.SIGCONT)
	p.send(t, "write")
	require.Equal(t, paused.token, number(t, p.expect(t, "write "), 1))
	require.False(t, reg.write(paused), "the paused holder's late write is refused")
	lost := time.Unix(0, number(t, p.expect(t, "lost "), 1))
	require.Empty(t, reg.violations)

	// The successor still holds; the paused one releases what is left (a latch
	// rejoins the election on a new session; the others say they no longer held).
	select {
	case <-next.Lost():
		t.Fatal("the successor lost its hold")
	default:
	}
	require.NoError(t, next.Release(ctx))
	p.send(t, "release")
	p.expect(t, "released", "error ")
	requireNoEphemerals(t, c, path)
	return lost.Sub(resumed)
}

// contend takes the hold of recipe at path, as a successor or a waiter.
func contend(ctx context.Context, c *framework.Client, recipe, path string) (held, error) {
	take, err := holds.New(c, recipe, path)
	if err != nil {
		return nil, err
	}
	return take(ctx)
}

// A holder process that cannot take the lock in its own time says so, and is heard
// saying it: the chaos run waits for its answer longer than the holder waits for the
// lock (acquireAnswer), so that a wait that ran out is an error, not a silence.
func TestHolderSaysWhenItCannotAcquire(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	taken, err := contend(ctx, c, "mutex", "/unavailable")
	require.NoError(t, err)
	const acquire = 200 * time.Millisecond
	p := startHolder(t, []string{srv.Addr()}, "mutex", "/unavailable", pausedSession, "-acquire", acquire.String())
	require.NoError(t, p.tell("acquire"))
	line, err := p.await(acquireAnswer(acquire, pausedSession), "held ", "error ")
	require.NoError(t, err)
	require.Contains(t, line, "error ")
	require.Contains(t, line, context.DeadlineExceeded.Error())
	require.NoError(t, taken.Release(ctx))
	requireNoEphemerals(t, c, "/unavailable")
}
