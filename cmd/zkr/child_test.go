//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// grandchild is a CMD that starts a grandchild which works on (a shell loop that
// ignores SIGHUP, as nohup'd work does) and writes its pid to $DIR/grandchild, then,
// once it has, writes zkr's pid to $DIR/zkr and runs script.
func grandchild(script string) string {
	return `sh -c 'trap "" HUP; echo $$ > "$DIR/grandchild.new"; mv "$DIR/grandchild.new" "$DIR/grandchild"
			while :; do sleep 0.02; done' &
		while [ ! -f "$DIR/grandchild" ]; do sleep 0.01; done
		echo $PPID > "$DIR/zkr"
		` + script
}

// pidIn is the pid a child wrote to the file name, once it has.
func (h *harness) pidIn(name string) int {
	h.t.Helper()
	eventually(h.t, "a pid in "+name, func() bool { return len(h.lines(name)) == 1 })
	pid, err := strconv.Atoi(h.lines(name)[0])
	require.NoError(h.t, err)
	h.t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) }) // if the test failed
	return pid
}

// A SIGKILL of zkr, which it cannot catch, takes CMD's whole process tree with it,
// grandchildren included: nothing goes on working under a lock that nobody will
// hold once zkr's session expires.
func TestGrandchildrenEndWithZkr(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	p := h.start(args("lock", "/tree", sh(grandchild("wait")))...)
	work := h.pidIn("grandchild")
	require.True(t, alive(work))
	p.signal(syscall.SIGKILL)
	require.Equal(t, 128+int(syscall.SIGKILL), p.wait())
	eventually(t, "the grandchild's end", func() bool { return !alive(work) })
}

// When CMD exits, what it left running in its process group ends too, before the
// lock is released.
func TestGrandchildrenEndWithCmd(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	p := h.start(args("lock", "/tree", sh(grandchild("exit 3")))...)
	work := h.pidIn("grandchild")
	require.Equal(t, 3, p.wait())
	eventually(t, "the grandchild's end", func() bool { return !alive(work) })
}

// startOnTerminal runs script with sh on a terminal of its own, as a login shell's
// command (a session leader, the terminal's foreground group), $ZKR naming zkr.
func (h *harness) startOnTerminal(script string) *terminal {
	h.t.Helper()
	term := newTerminal(h.t)
	cmd := exec.CommandContext(testCtx(h.t), "sh", "-c", script)
	cmd.Env = append(os.Environ(), "ZK_SERVERS="+h.servers, "DIR="+h.dir, "ZKR="+zkrBin,
		"GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = term.slave, term.slave, term.slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	require.NoError(h.t, cmd.Start())
	require.NoError(h.t, term.slave.Close()) // sh has its own
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	h.t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		if h.t.Failed() {
			h.t.Logf("terminal:\n%q", term.out.String())
		}
	})
	return term
}

func (term *terminal) typeIn(t *testing.T, text string) {
	t.Helper()
	_, err := term.master.WriteString(text)
	require.NoError(t, err)
}

// script writes a shell script to $DIR/name, for a command line to run.
func (h *harness) script(name, text string) {
	h.t.Helper()
	require.NoError(h.t, os.WriteFile(filepath.Join(h.dir, name), []byte(text), 0o644))
}

// On a terminal, CMD's group has the terminal (CMD reads it), and CMD's process tree
// still ends with zkr, grandchildren included.
func TestGrandchildrenEndWithZkrOnATerminal(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.script("cmd", grandchild(`read line; echo "$line" > "$DIR/read"; wait`))
	term := h.startOnTerminal(`"$ZKR" lock /tty -- sh "$DIR/cmd"`)
	work := h.pidIn("grandchild")
	term.typeIn(t, "hello\n")
	h.waitLine("read", "hello")
	zkr := h.pidIn("zkr")
	require.NoError(t, syscall.Kill(zkr, syscall.SIGKILL))
	eventually(t, "the grandchild's end", func() bool { return !alive(work) })
}

// After CMD, zkr's caller has the terminal again: the shell that ran zkr reads it.
func TestTerminalBackAfterCmd(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	term := h.startOnTerminal(`"$ZKR" lock /tty -- sh -c 'read line; echo "$line" > "$DIR/read"'
		read line; echo "$line" > "$DIR/after"`)
	term.typeIn(t, "one\n")
	h.waitLine("read", "one")
	term.typeIn(t, "two\n")
	h.waitLine("after", "two")
}

// Ctrl-Z goes to CMD's group, which has the terminal. A shell that does job control
// would see zkr stop too; with none above zkr (here a script's sh, in zkr's own
// group), nothing could continue it, so Ctrl-Z stops nothing: CMD finishes.
func TestCtrlZWithoutJobControl(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.script("cmd", `echo started > "$DIR/log"
		while [ ! -f "$DIR/go" ]; do sleep 0.02; done
		echo done >> "$DIR/log"`)
	term := h.startOnTerminal(`"$ZKR" lock /tty -- sh "$DIR/cmd"; echo "zkr $?" >> "$DIR/log"`)
	h.waitLine("log", "started")
	term.typeIn(t, "\x1a")         // Ctrl-Z
	waitOutput(t, &term.out, "^Z") // echoed: the group has had its SIGTSTP
	h.touch("go")
	h.waitLine("log", "zkr 0")
	require.Equal(t, []string{"started", "done", "zkr 0"}, h.lines("log"))
}
