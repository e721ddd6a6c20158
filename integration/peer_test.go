package integration

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const wait = zkrtest.Wait

var (
	testCtx   = zkrtest.Context
	newClient = zkrtest.Client
	children  = zkrtest.Children
)

// peer is one Java process running Curator's recipes (bench/curator-peer).
type peer struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
}

// startPeer runs the Curator peer with args; it is released and stopped at the end
// of the test.
func startPeer(t *testing.T, args ...string) *peer {
	t.Helper()
	classes, err := filepath.Abs("../build/curator-peer")
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(classes, "CuratorPeer.class")); err != nil {
		t.Fatalf("the Curator peer is not built: run `make curator-peer` (it installs Curator with `make deps`)")
	}
	cp := classes + ":/usr/share/java/curator-recipes.jar:/usr/share/java/slf4j-nop.jar"
	cmd := exec.Command("java", append([]string{"-Xmx128m", "-XX:+UseSerialGC", "-cp", cp, "CuratorPeer"}, args...)...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	p := &peer{cmd: cmd, stdin: stdin, lines: make(chan string, 100)}
	go func() {
		defer close(p.lines)
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			p.lines <- s.Text()
		}
	}()
	t.Cleanup(func() { p.stop() })
	return p
}

// expect waits for the next line that starts with prefix, and returns it.
func (p *peer) expect(t *testing.T, prefix string) string {
	t.Helper()
	deadline := time.After(wait)
	for {
		select {
		case line, ok := <-p.lines:
			require.True(t, ok, "the Curator peer exited while we waited for %q", prefix)
			require.False(t, strings.HasPrefix(line, "ERROR"), line)
			if strings.HasPrefix(line, prefix) {
				return line
			}
		case <-deadline:
			t.Fatalf("the Curator peer did not say %q", prefix)
		}
	}
}

func (p *peer) send(t *testing.T, line string) {
	t.Helper()
	_, err := io.WriteString(p.stdin, line+"\n")
	require.NoError(t, err)
}

// stop releases what the peer holds and waits for it to exit.
func (p *peer) stop() {
	_, _ = io.WriteString(p.stdin, "release\n")
	_ = p.stdin.Close()
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
	for range p.lines { // the reader ends with the process
	}
}
