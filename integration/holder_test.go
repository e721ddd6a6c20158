package integration

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// holderDir holds the holder program (./holder), built once for every test that
// needs a participant in a process of its own.
var (
	holderDir   string
	holderBuild sync.Once
	holderErr   error
)

func holderBinary(t testing.TB) string {
	t.Helper()
	holderBuild.Do(func() {
		if holderDir, holderErr = os.MkdirTemp("", "zkrecipes-holder-"); holderErr != nil {
			return
		}
		goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
		out, err := exec.Command(goTool, "build", "-o", filepath.Join(holderDir, "holder"), "./holder").CombinedOutput()
		if err != nil {
			holderErr = fmt.Errorf("building the holder: %w\n%s", err, out)
		}
	})
	require.NoError(t, holderErr)
	return filepath.Join(holderDir, "holder")
}

// holderProc is one holder process (see holder/main.go), driven line by line.
type holderProc struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	lines   chan string
	pending []string // read, not yet expected
}

// startHolder runs a holder of recipe at path on servers, with the given session
// timeout; it is stopped (stdin closed, then killed) at the end of the test.
func startHolder(t testing.TB, servers []string, recipe, path string, session time.Duration, extra ...string) *holderProc {
	t.Helper()
	args := append([]string{"-servers", strings.Join(servers, ","), "-recipe", recipe, "-path", path,
		"-session", session.String()}, extra...)
	cmd := exec.Command(holderBinary(t), args...)
	cmd.Stderr = os.Stderr
	// If the test binary dies, the holder dies too, its session with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	p := &holderProc{cmd: cmd, stdin: stdin, lines: make(chan string, 64)}
	go func() {
		defer close(p.lines)
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			p.lines <- s.Text()
		}
	}()
	t.Cleanup(p.stop)
	return p
}

func (p *holderProc) send(t testing.TB, cmd string) {
	t.Helper()
	_, err := io.WriteString(p.stdin, cmd+"\n")
	require.NoError(t, err)
}

// expect returns the holder's next line that starts with one of prefixes; lines
// with other prefixes are kept for later expects.
func (p *holderProc) expect(t testing.TB, prefixes ...string) string {
	t.Helper()
	match := func(l string) bool {
		return slices.ContainsFunc(prefixes, func(prefix string) bool { return strings.HasPrefix(l, prefix) })
	}
	for i, l := range p.pending {
		if match(l) {
			p.pending = append(p.pending[:i], p.pending[i+1:]...)
			return l
		}
	}
	deadline := time.After(wait)
	for {
		select {
		case l, ok := <-p.lines:
			require.True(t, ok, "the holder exited while we waited for %q", prefixes)
			if match(l) {
				return l
			}
			p.pending = append(p.pending, l)
		case <-deadline:
			t.Fatalf("the holder did not say %q (it said %q)", prefixes, p.pending)
		}
	}
}

// number is the integer field i (from 0) of line.
func number(t testing.TB, line string, i int) int64 {
	t.Helper()
	f := strings.Fields(line)
	require.Greater(t, len(f), i, line)
	n, err := strconv.ParseInt(f[i], 10, 64)
	require.NoError(t, err, line)
	return n
}

func (p *holderProc) signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(sig))
}

// stop ends the holder: stdin closed (it closes its session and exits), or killed if
// it does not exit in time.
func (p *holderProc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
	_ = p.stdin.Close()
	done := make(chan struct{})
	go func() {
		for range p.lines {
		}
		_ = p.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(wait):
		_ = p.cmd.Process.Kill()
		<-done
	}
}
