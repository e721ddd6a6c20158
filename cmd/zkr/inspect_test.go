package main

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// inspect lists a contended lock's holder and waiters in queue order, with ids, for
// every recipe; and the waiters' progress lines name the holder. (Interop with
// Apache Curator's participants: TestInspectCuratorParticipants.)
func TestInspect(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	env := []string{"ZK_SERVERS=" + h.servers}

	type row struct{ id, kind, state string }
	check := func(t *testing.T, path, recipe string, want []row) {
		t.Helper()
		code, stdout, stderr := runZkr(t, env, "inspect", path, "--json")
		require.Equal(t, 0, code, stderr)
		var q queue
		require.NoError(t, json.Unmarshal([]byte(stdout), &q), stdout)
		require.Equal(t, path, q.Path)
		require.Equal(t, recipe, q.Recipe)
		var got []row
		for _, p := range q.Participants {
			got = append(got, row{p.ID, p.Kind, p.State})
			require.True(t, strings.HasPrefix(p.Node, path+"/"), p.Node)
			require.True(t, strings.HasPrefix(p.Session, "0x"), p.Session)
			require.Positive(t, p.FencingToken)
		}
		require.Equal(t, want, got)

		code, stdout, stderr = runZkr(t, env, "inspect", path)
		require.Equal(t, 0, code, stderr)
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		require.Len(t, lines, 2+len(want), stdout)
		for i, w := range want {
			f := strings.Fields(lines[2+i])
			require.Equal(t, []string{w.state, w.kind, w.id}, f[1:4], lines[2+i])
		}
	}
	// hold starts a zkr that holds until SIGTERM, and one that waits runs true.
	hold := func(a ...string) *proc { return h.start(a...) }

	t.Run("mutex", func(t *testing.T) {
		t.Parallel()
		a := hold("lock", "/m", "--id", "holder-a")
		waitOutput(t, &a.stdout, "/m/_c_")
		b := hold("lock", "/m", "--id", "waiter-b", "--", "true")
		h.waitChildren("/m", 2)
		c := hold("lock", "/m", "--id", "waiter-c", "--", "true")
		h.waitChildren("/m", 3)
		check(t, "/m", "mutex", []row{{"holder-a", "lock", "holder"}, {"waiter-b", "lock", "waiting"}, {"waiter-c", "lock", "waiting"}})
		waitOutput(t, &c.stderr, "zkr lock: waiting for the lock on /m: held by holder-a (joined ")
		waitOutput(t, &c.stderr, "1 ahead of us")
		a.signal(syscall.SIGTERM)
		for _, p := range []*proc{a, b, c} {
			require.Equal(t, 0, p.wait())
		}
	})
	t.Run("rwlock", func(t *testing.T) {
		t.Parallel()
		r1 := hold("rlock", "/rw", "--id", "r1")
		waitOutput(t, &r1.stdout, "/rw/_c_")
		w := hold("wlock", "/rw", "--id", "w", "--", "true")
		h.waitChildren("/rw", 2)
		r2 := hold("rlock", "/rw", "--id", "r2", "--", "true")
		h.waitChildren("/rw", 3)
		check(t, "/rw", "rwlock", []row{{"r1", "read", "holder"}, {"w", "write", "waiting"}, {"r2", "read", "waiting"}})
		r1.signal(syscall.SIGTERM)
		for _, p := range []*proc{r1, w, r2} {
			require.Equal(t, 0, p.wait())
		}
	})
	t.Run("semaphore", func(t *testing.T) {
		t.Parallel()
		s1 := hold("semaphore", "/s", "--leases", "1", "--id", "s1")
		waitOutput(t, &s1.stdout, "/s/leases/_c_")
		s2 := hold("semaphore", "/s", "--leases", "1", "--id", "s2", "--", "true")
		h.waitChildren("/s/leases", 2)
		s3 := hold("semaphore", "/s", "--leases", "1", "--id", "s3", "--", "true")
		h.waitChildren("/s/locks", 2)
		check(t, "/s", "semaphore", []row{{"s1", "lease", "holder"}, {"s2", "lease", "waiting"},
			{"s2", "lock", "waiting"}, {"s3", "lock", "waiting"}})
		s1.signal(syscall.SIGTERM)
		for _, p := range []*proc{s1, s2, s3} {
			require.Equal(t, 0, p.wait())
		}
	})
	t.Run("latch", func(t *testing.T) {
		t.Parallel()
		e1 := hold("elect", "/e", "--id", "e1", "--", "sh", "-c", `echo led >> "$DIR/led"; exec sleep 600`)
		h.waitLine("led", "led")
		e2 := hold("elect", "/e", "--id", "e2", "--", "true")
		h.waitChildren("/e", 2)
		check(t, "/e", "latch", []row{{"e1", "latch", "leader"}, {"e2", "latch", "waiting"}})
		e1.signal(syscall.SIGTERM)
		require.Equal(t, 128+int(syscall.SIGTERM), e1.wait())
		require.Equal(t, 0, e2.wait())
	})
	t.Run("nobody", func(t *testing.T) {
		t.Parallel()
		// A path with no node is an error, not an empty queue: a typo shows.
		code, stdout, stderr := runZkr(t, env, "inspect", "/nobody")
		require.Equal(t, exitNoNode, code)
		require.Empty(t, stdout)
		require.Equal(t, "zkr inspect: /nobody: no such node\n", stderr)
		code, stdout, stderr = runZkr(t, env, "inspect", "/nobody", "--json")
		require.Equal(t, exitNoNode, code)
		require.Empty(t, stdout)
		require.Equal(t, "zkr inspect: /nobody: no such node\n", stderr)

		// An empty node (an idle lock's parent) has no participants.
		_, err := h.client.Create(testCtx(t), "/idle", nil)
		require.NoError(t, err)
		code, stdout, stderr = runZkr(t, env, "inspect", "/idle")
		require.Equal(t, 0, code, stderr)
		require.Equal(t, "/idle: no participants\n", stdout)
	})
	t.Run("plain node", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		_, err := h.client.Create(ctx, "/plain", []byte("abc"))
		require.NoError(t, err)
		for _, child := range []string{"/plain/a", "/plain/b"} {
			_, err := h.client.Create(ctx, child, nil)
			require.NoError(t, err)
		}
		code, stdout, stderr := runZkr(t, env, "inspect", "/plain")
		require.Equal(t, 0, code, stderr)
		require.True(t, strings.HasPrefix(stdout, "/plain: no recipe's node (no lock queue, no group): 2 children, 3 bytes of data, version 0, modified "), stdout)
		code, stdout, stderr = runZkr(t, env, "inspect", "/plain", "--json")
		require.Equal(t, 0, code, stderr)
		var v plainView
		require.NoError(t, json.Unmarshal([]byte(stdout), &v), stdout)
		require.Equal(t, plainView{Path: "/plain", Children: 2, DataBytes: 3, Modified: v.Modified}, v)
	})
	t.Run("a folder named locks", func(t *testing.T) {
		t.Parallel()
		// /app/locks holds locks, not a semaphore's queue: /app is no semaphore.
		a := hold("lock", "/app/locks/report", "--id", "a")
		waitOutput(t, &a.stdout, "/app/locks/report/_c_")
		code, stdout, stderr := runZkr(t, env, "inspect", "/app")
		require.Equal(t, 0, code, stderr)
		require.True(t, strings.HasPrefix(stdout, "/app: no recipe's node (no lock queue, no group): 1 children"), stdout)
		a.signal(syscall.SIGTERM)
		require.Equal(t, 0, a.wait())
	})
}
