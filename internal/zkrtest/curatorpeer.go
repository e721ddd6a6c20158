package zkrtest

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
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
// released and the process stopped at the end of the test. The first start in a test
// binary checks that the peer runs the Curator and ZooKeeper client it was built for.
func StartCuratorPeer(t testing.TB, args ...string) *CuratorPeer {
	t.Helper()
	CuratorPeerVersion(t)
	cmd := exec.Command("java", append([]string{"-Xmx128m", "-XX:+UseSerialGC", "-cp", curatorPeerClassPath(t), "CuratorPeer"}, args...)...)
	cmd.Stderr = os.Stderr
	stdin, lines := StartLines(t, cmd)
	p := &CuratorPeer{cmd: cmd, stdin: stdin, lines: lines}
	t.Cleanup(p.stop)
	return p
}

// curatorVersion is the Curator the tests' peer runs, from $ZKTEST_CURATOR ("5.4" for
// bookworm's, with ZooKeeper 3.8.0's client, or "5.7" for forky's, with 3.9.6's): the
// name of its directory under build/curator-peer, where `make curator-peer` builds
// both.
func curatorVersion() string {
	if v := strings.TrimSpace(os.Getenv("ZKTEST_CURATOR")); v != "" {
		return v
	}
	return "5.7"
}

// curatorPeerClassPath is the peer's classes and the jars it was compiled against, in
// the order the Makefile wrote them.
func curatorPeerClassPath(t testing.TB) string {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	classes := filepath.Join(filepath.Dir(here), "..", "..", "build", "curator-peer", curatorVersion())
	jars, err := os.ReadFile(filepath.Join(classes, "classpath"))
	if err != nil {
		t.Fatalf("the Curator peer for Curator %s (ZKTEST_CURATOR) is not built: run `make curator-peer` (it fetches Curator with `make deps`): %v", curatorVersion(), err)
	}
	return classes + ":" + strings.TrimSpace(string(jars))
}

var peerVersion struct {
	once               sync.Once
	curator, zookeeper string
	err                error
}

// CuratorPeerVersion is what the peer runs, as it says itself: Curator's version
// ("5.7.1") and its ZooKeeper client's ("3.9.6"). It fails the test if that is not the
// Curator that ZKTEST_CURATOR chose and the ZooKeeper client of its class path, as a
// class path whose jars name other versions' first would make it.
func CuratorPeerVersion(t testing.TB) (curator, zookeeper string) {
	t.Helper()
	cp := curatorPeerClassPath(t)
	peerVersion.once.Do(func() {
		out, err := exec.Command("java", "-cp", cp, "CuratorPeer", "version").CombinedOutput()
		if err != nil {
			peerVersion.err = fmt.Errorf("CuratorPeer version: %w: %s", err, out)
			return
		}
		for _, field := range strings.Fields(strings.TrimPrefix(strings.TrimSpace(string(out)), "VERSION ")) {
			if v, ok := strings.CutPrefix(field, "curator="); ok {
				peerVersion.curator = v
			}
			if v, ok := strings.CutPrefix(field, "zookeeper="); ok {
				peerVersion.zookeeper = v
			}
		}
		wantZK := ""
		for _, jar := range strings.Split(cp, ":") {
			// Debian's zookeeper.jar sits beside zookeeper-<version>.jar, one linked to the other.
			if versioned, _ := filepath.Glob(filepath.Join(filepath.Dir(jar), "zookeeper-[0-9]*.jar")); filepath.Base(jar) == "zookeeper.jar" && len(versioned) == 1 {
				wantZK = strings.TrimSuffix(strings.TrimPrefix(filepath.Base(versioned[0]), "zookeeper-"), ".jar")
			}
		}
		if !strings.HasPrefix(peerVersion.curator+".", curatorVersion()+".") || peerVersion.zookeeper != wantZK {
			peerVersion.err = fmt.Errorf("the Curator peer runs Curator %q with ZooKeeper's client %q, not Curator %s with %s's client: its class path puts other jars first",
				peerVersion.curator, peerVersion.zookeeper, curatorVersion(), wantZK)
		}
	})
	if peerVersion.err != nil {
		t.Fatal(peerVersion.err)
	}
	return peerVersion.curator, peerVersion.zookeeper
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
