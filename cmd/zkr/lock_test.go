package main

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/zktest"
)

// Two runs under one lock never overlap: the second child starts after the first
// ended. The first child holds until the test sees the second zkr waiting (its node
// queued and its progress line shown), so an overlap would be recorded.
func TestLockExcludes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	child := func(name string) []string {
		return sh(fmt.Sprintf(`echo "start %[1]s" >> "$DIR/log"
			while [ ! -f "$DIR/go-%[1]s" ]; do sleep 0.02; done
			echo "end %[1]s" >> "$DIR/log"`, name))
	}
	a := h.start(args("lock", "/jobs/x", "--id", "a", child("A"))...)
	h.waitLine("log", "start A")
	b := h.start(args("lock", "/jobs/x", "--id", "b", child("B"))...)
	h.waitChildren("/jobs/x", 2)
	waitOutput(t, &b.stderr, "waiting for the lock on /jobs/x: held by a")
	h.touch("go-A")
	require.Equal(t, 0, a.wait())
	h.waitLine("log", "start B")
	h.touch("go-B")
	require.Equal(t, 0, b.wait())
	require.Equal(t, []string{"start A", "end A", "start B", "end B"}, h.lines("log"))
	require.Empty(t, h.children("/jobs/x"))
}

// zkr exits with its child's code, and gives the child its hold in the environment.
func TestChild(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, tc := range []struct {
		name   string
		script string
		code   int
	}{
		{"exit 0", "exit 0", 0},
		{"exit 3", "exit 3", 3},
		{"exit 42", "exit 42", 42},
		{"killed by SIGKILL", "kill -KILL $$", 128 + int(syscall.SIGKILL)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := "/codes/" + strings.ReplaceAll(tc.name, " ", "-")
			code, _, stderr := runZkr(t, []string{"ZK_SERVERS=" + h.servers}, args("lock", path, sh(tc.script))...)
			require.Equal(t, tc.code, code, stderr)
			require.Empty(t, h.children(path))
		})
	}
	t.Run("not found", func(t *testing.T) {
		t.Parallel()
		code, _, stderr := runZkr(t, []string{"ZK_SERVERS=" + h.servers}, "lock", "/codes/not-found", "--", "/no/such/program")
		require.Equal(t, exitNotFound, code)
		require.Contains(t, stderr, "cannot run /no/such/program")
		require.Empty(t, h.children("/codes/not-found"))
	})

	for _, tc := range []struct {
		cmd  []string
		kind string
	}{
		{[]string{"lock"}, "-lock-"},
		{[]string{"rlock"}, "-read-"},
		{[]string{"wlock"}, "-write-"},
		{[]string{"wlock", "--curator-names"}, "-__WRIT__"},
		{[]string{"semaphore", "--leases", "3"}, "/leases/_c_"},
	} {
		t.Run("environment of "+strings.Join(tc.cmd, " "), func(t *testing.T) {
			t.Parallel()
			path := "/env/" + strings.Join(tc.cmd, "")
			code, stdout, stderr := runZkr(t, []string{"ZK_SERVERS=" + h.servers},
				args(tc.cmd[0], path, tc.cmd[1:], sh(`echo "$ZKR_LOCK_PATH"; echo "$ZKR_LOCK_NODE"; echo "$ZKR_FENCING_TOKEN"`))...)
			require.Equal(t, 0, code, stderr)
			out := strings.Split(strings.TrimSpace(stdout), "\n")
			require.Len(t, out, 3)
			require.Equal(t, path, out[0])
			require.True(t, strings.HasPrefix(out[1], path+"/"), out[1])
			require.Contains(t, out[1], tc.kind)
			token, err := strconv.ParseInt(out[2], 10, 64)
			require.NoError(t, err)
			require.Positive(t, token)
		})
	}
}

// --timeout gives up with its own code while another holds, and leaves no node.
// Without a command, zkr prints its node and holds until SIGTERM.
func TestTimeout(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	holder := h.start("lock", "/t", "--id", "holder")
	waitOutput(t, &holder.stdout, "/t/_c_")
	node := strings.TrimSpace(holder.stdout.String())

	code, _, stderr := runZkr(t, []string{"ZK_SERVERS=" + h.servers}, "lock", "/t", "--timeout", "1s", "--", "true")
	require.Equal(t, exitTimeout, code, stderr)
	require.Equal(t, "zkr lock: timed out after 1s waiting for the lock on /t\n", lastLine(stderr))
	require.Equal(t, []string{strings.TrimPrefix(node, "/t/")}, h.children("/t"))

	holder.signal(syscall.SIGTERM)
	require.Equal(t, 0, holder.wait())
	require.Empty(t, h.children("/t"))
}

// lastLine is the last line of s, with its newline: progress lines may come before.
func lastLine(s string) string {
	lines := strings.SplitAfter(strings.TrimSuffix(s, "\n"), "\n")
	return lines[len(lines)-1] + "\n"
}

// When the session is lost while the child runs, the child gets SIGTERM and zkr
// exits with the lost code, whatever the child's own.
func TestLockLost(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	proxy := zktest.NewProxy(t, h.srv.Addr())
	p := startZkr(t, []string{"DIR=" + h.dir},
		args("--servers", proxy.Addr(), "--session-timeout", "2s", "lock", "/lost", "--grace", "5s",
			sh(`trap 'echo TERM >> "$DIR/log"; exit 0' TERM
				echo started >> "$DIR/log"
				while :; do sleep 0.02; done`))...)
	h.waitLine("log", "started")
	h.waitChildren("/lost", 1)
	require.NoError(t, proxy.ExpireSession(testCtx(t), 2*time.Second))
	require.Equal(t, exitLost, p.wait())
	require.Equal(t, []string{"started", "TERM"}, h.lines("log"))
	require.Contains(t, p.stderr.String(), "zkr lock: lost the lock on /lost while sh ran")
	h.waitChildren("/lost", 0)
}

// Signals to zkr reach the child; the child's code comes back and the lock is
// released.
func TestSignalsForwarded(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	p := h.start(args("lock", "/sig", sh(`trap 'echo USR1 >> "$DIR/log"' USR1
		trap 'echo TERM >> "$DIR/log"; exit 7' TERM
		echo started >> "$DIR/log"
		while :; do sleep 0.02; done`))...)
	h.waitLine("log", "started")
	p.signal(syscall.SIGUSR1)
	h.waitLine("log", "USR1")
	p.signal(syscall.SIGTERM)
	require.Equal(t, 7, p.wait())
	require.Equal(t, []string{"started", "USR1", "TERM"}, h.lines("log"))
	require.Empty(t, h.children("/sig"))
}

// A signal while waiting ends the wait with 128+N and leaves no node.
func TestSignalWhileWaiting(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	holder := h.start("lock", "/w")
	waitOutput(t, &holder.stdout, "/w/_c_")
	waiter := h.start("lock", "/w", "--", "true")
	h.waitChildren("/w", 2)
	waiter.signal(syscall.SIGINT)
	require.Equal(t, 128+int(syscall.SIGINT), waiter.wait())
	h.waitChildren("/w", 1)
	holder.signal(syscall.SIGINT)
	require.Equal(t, 0, holder.wait())
}

// Five runs of a two-lease semaphore: never more than two children at once, and
// two at once while others wait. Each child holds until the test lets it end, and
// the test lets one end only once every waiter is queued.
func TestSemaphore(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const runs, leases = 5, 2
	var ps []*proc
	for i := range runs {
		ps = append(ps, h.start(args("semaphore", "/sem", "--leases", strconv.Itoa(leases), "--id", fmt.Sprint("s", i),
			sh(fmt.Sprintf(`echo "start %[1]d" >> "$DIR/log"
				while [ ! -f "$DIR/go-%[1]d" ]; do sleep 0.02; done
				echo "end %[1]d" >> "$DIR/log"`, i)))...))
	}
	running := func() (started, ended []string) {
		for _, l := range h.lines("log") {
			if id, ok := strings.CutPrefix(l, "start "); ok {
				started = append(started, id)
			} else if id, ok := strings.CutPrefix(l, "end "); ok {
				ended = append(ended, id)
			}
		}
		return started, ended
	}
	for done := 0; done < runs; done++ {
		want := min(leases, runs-done)
		eventually(t, fmt.Sprintf("%d children running", want), func() bool {
			started, ended := running()
			return len(started)-len(ended) == want && len(ended) == done &&
				len(h.children("/sem/locks")) == runs-len(started)
		})
		started, _ := running()
		h.touch("go-" + started[done]) // the oldest still running
		h.waitLine("log", "end "+started[done])
	}
	for _, p := range ps {
		require.Equal(t, 0, p.wait())
	}
	most, now := 0, 0
	for _, l := range h.lines("log") {
		if strings.HasPrefix(l, "start ") {
			now++
		} else {
			now--
		}
		most = max(most, now)
	}
	require.Equal(t, leases, most, h.lines("log"))
	require.Empty(t, h.children("/sem/leases"))
}
