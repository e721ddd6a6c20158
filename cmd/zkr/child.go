package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

// child is the command zkr runs while it holds.
type child struct {
	cmd *exec.Cmd
	// group: the child leads a process group of its own, and signals go to the whole
	// group, so that a shell's children stop with it. Only when stdin is not a
	// terminal: a background group that reads the terminal would be stopped (SIGTTIN).
	group bool
	done  chan struct{} // closed once the child has exited and been reaped
}

// childEnv is zkr's environment plus what the child needs to know of its hold.
func childEnv(h *held) []string {
	return append(os.Environ(),
		"ZKR_LOCK_PATH="+h.path,
		"ZKR_LOCK_NODE="+h.node,
		"ZKR_FENCING_TOKEN="+strconv.FormatInt(h.token, 10))
}

// startChild starts argv with zkr's stdin and the given stdout and stderr. An error
// carries the shell's exit code for a command that cannot run (126) or is missing
// (127).
func startChild(argv, env []string, stdout, stderr io.Writer) (*child, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr, cmd.Env = os.Stdin, stdout, stderr, env
	c := &child{cmd: cmd, group: !isTerminal(os.Stdin), done: make(chan struct{})}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: c.group}
	// If zkr is killed (SIGKILL cannot be caught) its child must not outlive it,
	// running without the lock.
	setParentDeathSignal(cmd.SysProcAttr)

	started := make(chan error, 1)
	go func() {
		// The parent-death signal is sent when the thread that started the child
		// ends, not the process: keep this thread for as long as the child lives.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait() // the exit status is in cmd.ProcessState
		close(c.done)
	}()
	if err := <-started; err != nil {
		code := exitCannotRun
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			code = exitNotFound
		}
		return nil, &exitError{code, fmt.Sprintf("cannot run %s: %v", argv[0], err)}
	}
	return c, nil
}

// signal passes sig on to the child, or to its process group.
func (c *child) signal(sig syscall.Signal) {
	select {
	case <-c.done: // reaped: its pid may belong to another process by now
		return
	default:
	}
	if c.group {
		_ = syscall.Kill(-c.cmd.Process.Pid, sig)
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
	if c.group {
		// The group outlives its reaped leader while members remain, and its id is
		// not reused meanwhile.
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
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
