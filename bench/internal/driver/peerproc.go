package driver

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// process is a helper process the driver talks to in lines over its stdin and
// stdout: the Curator peer's JVM, kazoo's Python. Its stderr is ours.
type process struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string // its stdout, closed when it ends
	done  chan struct{}
}

func startProcess(name string, args ...string) (*process, error) {
	cmd := exec.Command(name, args...)
	cmd.Stderr = os.Stderr
	// If the driver dies, the process goes with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{cmd: cmd, stdin: stdin, lines: make(chan string, 16), done: make(chan struct{})}
	go func() {
		defer close(p.lines)
		s := bufio.NewScanner(stdout)
		s.Buffer(make([]byte, 64*1024), 16*1024*1024) // latencies come on one line
		for s.Scan() {
			p.lines <- s.Text()
		}
	}()
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

func (p *process) send(line string) error {
	_, err := io.WriteString(p.stdin, line+"\n")
	return err
}

// cpu is the CPU time the process has used so far.
func (p *process) cpu() time.Duration { return procCPU(strconv.Itoa(p.cmd.Process.Pid)) }

// close ends the process: end of input makes it exit, or after 15 s it is killed.
func (p *process) close() {
	_ = p.stdin.Close()
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	for range p.lines {
	}
}
