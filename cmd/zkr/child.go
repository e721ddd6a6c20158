package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// child is the command zkr runs while it holds, and everything it starts.
//
// Nothing may run on under a lock that nobody holds, so CMD runs in a process group
// of its own, led by zkr's guard (child_guard.go): a second zkr process that kills the
// whole group when zkr ends, however it ends (SIGKILL included), or when zkr is done
// with CMD. A process that leaves the group (setsid, setpgid) escapes it: a cgroup
// would be needed for those.
//
// When stdin is zkr's controlling terminal, CMD's group gets the terminal whenever
// zkr has it, and zkr does a shell's job control for it (child_linux.go): Ctrl-C
// and Ctrl-\ go to CMD's group alone, and Ctrl-Z stops CMD and then zkr, so that
// the shell's fg and bg work on the whole.
type child struct {
	cmd  *exec.Cmd
	pgid int // CMD's process group, the guard's pid; 0 when CMD shares zkr's group
	// guard leads pgid and kills it when toGuard, its stdin, closes.
	guard   *exec.Cmd
	toGuard *os.File
	tty     *ctty         // stdin, zkr's controlling terminal; nil when it is not one
	done    chan struct{} // closed once CMD has exited and been reaped
}

// childEnv is zkr's environment plus what the child needs to know of its hold.
func childEnv(h *held) []string {
	return append(os.Environ(),
		"ZKR_LOCK_PATH="+h.path,
		"ZKR_LOCK_NODE="+h.node,
		"ZKR_FENCING_TOKEN="+strconv.FormatInt(h.token, 10))
}

// startChild starts argv with zkr's stdin and the given stdout and stderr, in a
// process group that its guard kills when zkr ends. An error carries the shell's
// exit code for a command that cannot run (126) or is missing (127).
func startChild(argv, env []string, stdout, stderr io.Writer) (*child, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr, cmd.Env = os.Stdin, stdout, stderr, env
	c := &child{cmd: cmd, tty: controllingTerminal(os.Stdin), done: make(chan struct{})}
	if !sharesGroup(os.Stdin) {
		// The guard first: the group exists, guarded, before CMD is in it.
		if err := c.startGuard(); err != nil {
			return nil, &exitError{exitCannotRun, fmt.Sprintf("cannot start zkr's guard for %s: %v", argv[0], err)}
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: c.pgid}
	}
	stopJobs := c.jobControl() // listening before CMD can stop
	if err := cmd.Start(); err != nil {
		stopJobs()
		c.close()
		code := exitCannotRun
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			code = exitNotFound
		}
		return nil, &exitError{code, fmt.Sprintf("cannot run %s: %v", argv[0], err)}
	}
	go func() {
		_ = cmd.Wait() // the exit status is in cmd.ProcessState
		stopJobs()
		c.tty.takeBack(c.pgid)
		close(c.done)
	}()
	return c, nil
}

// startGuard starts the guard, the leader of a new process group, which gets the
// terminal if zkr has it, and returns once the guard is ready to guard.
func (c *child) startGuard() error {
	r, w, err := os.Pipe() // close-on-exec: only zkr holds w, and CMD never inherits it
	if err != nil {
		return err
	}
	defer r.Close()
	ready, fromGuard, err := os.Pipe()
	if err != nil {
		w.Close()
		return err
	}
	defer ready.Close()
	g := &exec.Cmd{Path: selfExe(), Args: []string{childGuardName}, Stdin: r, Stdout: fromGuard}
	g.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if c.tty.inForeground() {
		g.SysProcAttr.Foreground, g.SysProcAttr.Ctty = true, c.tty.fd
	}
	err = g.Start()
	fromGuard.Close()
	if err != nil {
		w.Close()
		return err
	}
	c.guard, c.toGuard, c.pgid = g, w, g.Process.Pid
	said, _ := io.ReadAll(ready) // until the guard closes its stdout, or dies
	if !bytes.Equal(said, guardReady) {
		c.close()
		return fmt.Errorf("it ended as it started (%v)", g.ProcessState)
	}
	return nil
}

// close ends CMD's process group: the guard kills whatever is left in it (CMD
// itself, if it still runs) and itself. Safe to call twice.
func (c *child) close() {
	if c.guard == nil {
		return
	}
	_ = c.toGuard.Close()
	_ = c.guard.Wait()
	c.guard = nil
}

// signal passes sig on to the child's process group (the guard ignores it).
func (c *child) signal(sig syscall.Signal) {
	select {
	case <-c.done: // reaped: its pid may belong to another process by now
		return
	default:
	}
	if c.pgid != 0 {
		_ = syscall.Kill(-c.pgid, sig)
		return
	}
	_ = c.cmd.Process.Signal(sig)
}

// stop ends a child whose hold was lost: SIGTERM, then SIGKILL if it is still
// running after grace. The group gets SIGKILL even when the child itself exited in
// time, so that nothing it started works on without the lock.
func (c *child) stop(grace time.Duration) {
	c.signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-c.done:
	case <-t.C:
	}
	if c.pgid != 0 {
		c.close()
	} else {
		_ = c.cmd.Process.Kill()
	}
	<-c.done
}

// exitCode is the child's exit code as a shell reports it: 128+N when signal N
// killed it.
func (c *child) exitCode() int {
	st := c.cmd.ProcessState
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return exitSignal + int(ws.Signal())
	}
	return st.ExitCode()
}
