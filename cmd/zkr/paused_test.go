package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// zkr and its child are paused (SIGSTOP) for longer than zkr's session timeout, as a
// VM pause stops both, and another zkr takes the lock meanwhile. On resume the child
// has finished its work before zkr runs at all (the test resumes the child first and
// waits until it has exited): zkr must not report that work as done under the lock.
// It exits 76, whatever the child's code.
func TestLockPausedPastItsSession(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	first := h.start(args("--session-timeout", "1s", "lock", "/paused",
		sh(`echo $$ > "$DIR/child"; while [ ! -e "$DIR/resume" ]; do sleep 0.05; done; echo done >> "$DIR/log"`))...)
	eventually(t, "the child's pid", func() bool { return len(h.lines("child")) == 1 })
	child, err := strconv.Atoi(h.lines("child")[0])
	require.NoError(t, err)
	group, err := syscall.Getpgid(child) // led by zkr's guard
	require.NoError(t, err)
	first.signal(syscall.SIGSTOP)
	require.NoError(t, syscall.Kill(-group, syscall.SIGSTOP))

	second := h.start(args("lock", "/paused", sh(`echo second >> "$DIR/log"`))...)
	require.Equal(t, 0, second.wait(), second.stderr.String())

	h.touch("resume")
	require.NoError(t, syscall.Kill(-group, syscall.SIGCONT))
	eventually(t, "the child's exit", func() bool { return exited(child) })
	first.signal(syscall.SIGCONT)
	require.Equal(t, exitLost, first.wait(), first.stderr.String())
	require.Contains(t, first.stderr.String(), "zkr lock: lost the lock on /paused")
	require.Equal(t, []string{"second", "done"}, h.lines("log"))
	h.waitChildren("/paused", 0)
}

// exited reports whether process pid has exited (a zombie not yet reaped counts).
func exited(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	// pid (comm) state ...: comm may hold spaces and parentheses, the state follows the last ')'.
	rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
	return strings.HasPrefix(strings.TrimSpace(rest), "Z")
}
