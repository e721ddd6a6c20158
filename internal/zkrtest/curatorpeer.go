package zkrtest

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// CuratorPeer is one Java process running Apache Curator's recipes
// (bench/curator-peer, built by `make curator-peer`), driven over its stdin and
// stdout: a participant of Curator's beside ours on the same paths.
type CuratorPeer struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
}

// StartCuratorPeer runs the peer with args (see CuratorPeer.java); what it holds is
// released and the process stopped at the end of the test.
func StartCuratorPeer(t testing.TB, args ...string) *CuratorPeer {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	classes := filepath.Join(filepath.Dir(here), "..", "..", "build", "curator-peer")
	if _, err := os.Stat(filepath.Join(classes, "CuratorPeer.class")); err != nil {
		t.Fatalf("the Curator peer is not built: run `make curator-peer` (it installs Curator with `make deps`)")
	}
	cp := classes + ":/usr/share/java/curator-recipes.jar:/usr/share/java/curator-x-discovery.jar:/usr/share/java/slf4j-nop.jar"
	cmd := exec.Command("java", append([]string{"-Xmx128m", "-XX:+UseSerialGC", "-cp", cp, "CuratorPeer"}, args...)...)
	cmd.Stderr = os.Stderr
	stdin, lines := StartLines(t, cmd)
	p := &CuratorPeer{cmd: cmd, stdin: stdin, lines: lines}
	t.Cleanup(p.stop)
	return p
}

// Expect waits for the peer's next line that starts with prefix, and returns it.
func (p *CuratorPeer) Expect(t testing.TB, prefix string) string {
	t.Helper()
	deadline := time.After(2 * Wait)
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

// Send writes a command line to the peer.
func (p *CuratorPeer) Send(t testing.TB, line string) {
	t.Helper()
	_, err := io.WriteString(p.stdin, line+"\n")
	require.NoError(t, err)
}

// Members asks a peer running `group` for the members its GroupMember sees: id ->
// payload.
func (p *CuratorPeer) Members(t testing.TB) map[string]string {
	t.Helper()
	p.Send(t, "members")
	members := map[string]string{}
	for {
		line := p.Expect(t, "")
		if line == "END" {
			return members
		}
		id, payload, _ := strings.Cut(strings.TrimPrefix(line, "MEMBER "), " ")
		members[id] = payload
	}
}

// stop releases what the peer holds and waits for it to exit.
func (p *CuratorPeer) stop() {
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
