package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/zktest"
)

// Three candidates: one child runs. Killing the leading zkr kills its child too,
// and another candidate's child starts once ZooKeeper ends the dead session.
func TestElect(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	candidates := map[string]*proc{}
	for i := 1; i <= 3; i++ {
		id := fmt.Sprint("e", i)
		candidates[id] = h.start(args("--session-timeout", "2s", "elect", "/leader", "--id", id,
			sh(fmt.Sprintf(`echo "start %s $$" >> "$DIR/log"; while :; do sleep 0.02; done`, id)))...)
	}
	h.waitChildren("/leader", 3)
	eventually(t, "a leader's child", func() bool { return len(h.lines("log")) > 0 })
	require.Len(t, h.lines("log"), 1)
	first, pid := parseStart(t, h.lines("log")[0])

	leader := candidates[first]
	leader.signal(syscall.SIGKILL)
	leader.wait()
	eventually(t, "the killed leader's child to die", func() bool { return !alive(pid) })
	eventually(t, "a second leader's child", func() bool { return len(h.lines("log")) == 2 })
	second, _ := parseStart(t, h.lines("log")[1])
	require.NotEqual(t, first, second)

	// The candidate still waiting goes first, so that it cannot take over.
	for id, p := range candidates {
		if id != first && id != second {
			p.signal(syscall.SIGTERM)
			require.Equal(t, 128+int(syscall.SIGTERM), p.wait())
		}
	}
	candidates[second].signal(syscall.SIGTERM)
	require.Equal(t, 128+int(syscall.SIGTERM), candidates[second].wait()) // the child's code: killed by TERM
	require.Len(t, h.lines("log"), 2)
	h.waitChildren("/leader", 0)
}

// With --requeue, a leader whose session is lost stops its child, campaigns again,
// and runs the child anew when it leads again.
func TestElectRequeue(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	proxy := zktest.NewProxy(t, h.srv.Addr())
	p := startZkr(t, []string{"DIR=" + h.dir},
		args("--servers", proxy.Addr(), "--session-timeout", "2s", "elect", "/requeue", "--requeue",
			sh(`trap 'echo TERM >> "$DIR/log"; exit 0' TERM
				echo start >> "$DIR/log"
				while :; do sleep 0.02; done`))...)
	h.waitLine("log", "start")
	require.NoError(t, proxy.ExpireSession(testCtx(t), 2*time.Second))
	eventually(t, "the child to run again", func() bool { return len(h.lines("log")) == 3 })
	require.Equal(t, []string{"start", "TERM", "start"}, h.lines("log"))
	p.signal(syscall.SIGTERM)
	require.Equal(t, 0, p.wait())
	require.Contains(t, p.stderr.String(), "campaigning again")
	h.waitChildren("/requeue", 0)
}

func parseStart(t *testing.T, line string) (id string, pid int) {
	t.Helper()
	f := strings.Fields(line)
	require.Len(t, f, 3, line)
	pid, err := strconv.Atoi(f[2])
	require.NoError(t, err)
	return f[1], pid
}

// alive reports whether a process exists and is not a zombie waiting to be reaped.
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses: "pid (comm) S ...".
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
