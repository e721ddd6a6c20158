package integration

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
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
		// go test puts its own Go's bin first in PATH: "go" is the Go that runs the test.
		out, err := exec.Command("go", "build", "-o", filepath.Join(holderDir, "holder"), "./holder").CombinedOutput()
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
	stdin, lines := zkrtest.StartLines(t, cmd)
	p := &holderProc{cmd: cmd, stdin: stdin, lines: lines}
	t.Cleanup(p.stop)
	return p
}

func (p *holderProc) send(t testing.TB, cmd string) {
	t.Helper()
	require.NoError(t, p.tell(cmd))
}

// tell is send for goroutines other than the test's.
func (p *holderProc) tell(cmd string) error {
	_, err := io.WriteString(p.stdin, cmd+"\n")
	return err
}

// expect returns the holder's next line that starts with one of prefixes; lines
// with other prefixes are kept for later expects.
func (p *holderProc) expect(t testing.TB, prefixes ...string) string {
	t.Helper()
	l, err := p.await(wait, prefixes...)
	require.NoError(t, err)
	return l
}

// await is expect for goroutines other than the test's, waiting at most d.
func (p *holderProc) await(d time.Duration, prefixes ...string) (string, error) {
	if l, ok := p.take(prefixes...); ok {
		return l, nil
	}
	deadline := time.After(d)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				return "", fmt.Errorf("the holder exited while we waited for %q", prefixes)
			}
			if matches(l, prefixes) {
				return l, nil
			}
			p.pending = append(p.pending, l)
		case <-deadline:
			return "", fmt.Errorf("the holder did not say %q within %v (it said %q)", prefixes, d, p.pending)
		}
	}
}

// take returns a line already said that starts with one of prefixes, if there is one.
func (p *holderProc) take(prefixes ...string) (string, bool) {
	for more := true; more; {
		select {
		case l, ok := <-p.lines:
			more = ok
			if ok {
				p.pending = append(p.pending, l)
			}
		default:
			more = false
		}
	}
	for i, l := range p.pending {
		if matches(l, prefixes) {
			p.pending = append(p.pending[:i], p.pending[i+1:]...)
			return l, true
		}
	}
	return "", false
}

func matches(line string, prefixes []string) bool {
	return slices.ContainsFunc(prefixes, func(prefix string) bool { return strings.HasPrefix(line, prefix) })
}

// number is the integer field i (from 0) of line.
func number(t testing.TB, line string, i int) int64 {
	t.Helper()
	n, err := field(line, i)
	require.NoError(t, err)
	return n
}

func field(line string, i int) (int64, error) {
	f := strings.Fields(line)
	if len(f) <= i {
		return 0, fmt.Errorf("no field %d in %q", i, line)
	}
	n, err := strconv.ParseInt(f[i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("field %d of %q: %w", i, line, err)
	}
	return n, nil
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
