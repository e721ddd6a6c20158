package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// zkrBin is the zkr binary the tests run, built once by TestMain (with the race
// detector when the tests have it, so that a race in zkr fails its run with exit
// code 66).
var zkrBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "zkr-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	zkrBin = filepath.Join(dir, "zkr")
	args := []string{"build", "-o", zkrBin}
	if raceEnabled {
		args = append(args, "-race")
	}
	if out, err := exec.Command(goTool(), append(args, ".")...).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building zkr: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// goTool is the go command: go test puts its own Go's bin first in PATH, so "go" is
// the Go that runs the test.
func goTool() string { return "go" }

// patience bounds every wait of a test for a condition; no test asserts a duration.
const patience = zkrtest.Wait

func testCtx(t *testing.T) context.Context { return zkrtest.Context(t) }

// harness is one test's ZooKeeper, a client to look at it, and a directory that the
// children write to ($DIR in their environment).
type harness struct {
	t       *testing.T
	srv     *zktest.Server
	servers string
	client  *framework.Client
	dir     string
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	srv := zktest.NewServer(t)
	c := zkrtest.Client(t, []string{srv.Addr()})
	return &harness{t: t, srv: srv, servers: srv.Addr(), client: c, dir: t.TempDir()}
}

// proc is one zkr process.
type proc struct {
	t              *testing.T
	cmd            *exec.Cmd
	stdout, stderr zkrtest.SyncBuffer
	done           chan struct{}
}

// start runs zkr with args against the harness's server.
func (h *harness) start(args ...string) *proc {
	return startZkr(h.t, []string{"ZK_SERVERS=" + h.servers, "DIR=" + h.dir}, args...)
}

// startZkr runs zkr with args and extra environment; stdin is /dev/null, as in cron.
func startZkr(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	return startZkrTo(t, nil, env, args...)
}

// startZkrTo is startZkr with zkr's stdout on the file given (a terminal), when not
// nil; p.stdout then stays empty.
func startZkrTo(t *testing.T, stdout *os.File, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, done: make(chan struct{})}
	p.cmd = exec.CommandContext(testCtx(t), zkrBin, args...)
	// The race detector sleeps a second before a process exits, unless told not to.
	p.cmd.Env = append(os.Environ(), "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
	p.cmd.Env = append(p.cmd.Env, env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if stdout != nil {
		p.cmd.Stdout = stdout
	}
	require.NoError(t, p.cmd.Start())
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("zkr %s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), p.stdout.String(), p.stderr.String())
		}
	})
	return p
}

// wait returns zkr's exit code once it has exited.
func (p *proc) wait() int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(patience):
		p.t.Fatalf("zkr %v has not exited; stderr:\n%s", p.cmd.Args[1:], p.stderr.String())
	}
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return p.cmd.ProcessState.ExitCode()
}

func (p *proc) signal(sig syscall.Signal) {
	p.t.Helper()
	require.NoError(p.t, p.cmd.Process.Signal(sig))
}

// runZkr runs zkr to its end and returns its exit code, stdout and stderr.
func runZkr(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	p := startZkr(t, env, args...)
	code := p.wait()
	return code, p.stdout.String(), p.stderr.String()
}

// eventually waits for cond, checking it every few milliseconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// children lists p's children, sorted: none if p does not exist.
func (h *harness) children(p string) []string {
	h.t.Helper()
	return zkrtest.Children(h.t, h.client, p)
}

func (h *harness) waitChildren(p string, n int) {
	h.t.Helper()
	eventually(h.t, fmt.Sprintf("%d children of %s", n, p), func() bool { return len(h.children(p)) == n })
}

// lines are the complete lines of a file the children write: none while the file
// is missing or a child is still writing its first line.
func (h *harness) lines(name string) []string {
	data, err := os.ReadFile(filepath.Join(h.dir, name))
	if err != nil {
		return nil
	}
	text := string(data)
	complete := text[:strings.LastIndexByte(text, '\n')+1]
	if complete == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(complete, "\n"), "\n")
}

func (h *harness) waitLine(name, line string) {
	h.t.Helper()
	eventually(h.t, fmt.Sprintf("%q in %s", line, name), func() bool {
		for _, l := range h.lines(name) {
			if l == line {
				return true
			}
		}
		return false
	})
}

func (h *harness) touch(name string) {
	h.t.Helper()
	require.NoError(h.t, os.WriteFile(filepath.Join(h.dir, name), nil, 0o644))
}

// waitOutput waits for text on one of a proc's streams.
func waitOutput(t *testing.T, b *zkrtest.SyncBuffer, text string) {
	t.Helper()
	eventually(t, fmt.Sprintf("%q in zkr's output", text), func() bool { return strings.Contains(b.String(), text) })
}

// sh is a child command: a shell script.
func sh(script string) []string { return []string{"--", "sh", "-c", script} }

func args(a ...any) []string {
	var out []string
	for _, x := range a {
		switch x := x.(type) {
		case string:
			out = append(out, x)
		case []string:
			out = append(out, x...)
		default:
			panic(fmt.Sprintf("args: %T", x))
		}
	}
	return out
}
