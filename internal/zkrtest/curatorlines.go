package zkrtest

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// PeerLines are every line a peer writes, collected as they come, for a test that
// reads a stream of them (a watcher's or a cache's events) beside the answers to
// its commands. The goroutine that collects them ends with the peer.
type PeerLines struct {
	mu    sync.Mutex
	lines []string
}

// Collect collects every line the peer writes from now on; Expect must not be
// called after it, as it would take lines away.
func (p *CuratorPeer) Collect() *PeerLines {
	l := &PeerLines{}
	go func() {
		for line := range p.lines {
			l.mu.Lock()
			l.lines = append(l.lines, line)
			l.mu.Unlock()
		}
	}()
	return l
}

// Since returns the lines from the n-th on.
func (l *PeerLines) Since(n int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n >= len(l.lines) {
		return nil
	}
	return slices.Clone(l.lines[n:])
}

// Wait waits for a line at or after the n-th that starts with prefix, and returns
// its index. A line that says ERROR fails the test, as does none within Wait.
func (l *PeerLines) Wait(t testing.TB, n int, prefix string) int {
	t.Helper()
	deadline := time.Now().Add(Wait)
	for {
		for i, line := range l.Since(n) {
			if strings.HasPrefix(line, "ERROR") {
				t.Fatalf("the Curator peer: %s", line)
			}
			if strings.HasPrefix(line, prefix) {
				return n + i
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Curator peer did not say %q after line %d: %q", prefix, n, l.Since(n))
		}
		time.Sleep(5 * time.Millisecond) // polling a condition; its deadline is Wait
	}
}
