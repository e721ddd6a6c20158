package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
)

// runZkrIn is runZkr with stdin.
func runZkrIn(t *testing.T, env []string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.CommandContext(testCtx(t), zkrBin, args...)
	cmd.Env = append(append(os.Environ(), "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0"), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ee := (*exec.ExitError)(nil); err != nil {
		require.ErrorAs(t, err, &ee)
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

// The shell's commands read and write nodes, and each refusal has its exit code
// and names the path.
func TestShell(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := testCtx(t)
	env := []string{"ZK_SERVERS=" + h.servers}
	zkr := func(args ...string) (int, string, string) {
		t.Helper()
		return runZkr(t, env, args...)
	}
	ok := func(args ...string) string {
		t.Helper()
		code, stdout, stderr := zkr(args...)
		require.Equal(t, 0, code, stderr)
		require.Empty(t, stderr)
		return stdout
	}
	fails := func(code int, msg string, args ...string) {
		t.Helper()
		got, stdout, stderr := zkr(args...)
		require.Equal(t, code, got, stderr)
		require.Empty(t, stdout)
		require.Equal(t, "zkr "+args[0]+": "+msg+"\n", stderr)
	}

	t.Run("create, get, set", func(t *testing.T) {
		require.Equal(t, "/cfg\n", ok("create", "/cfg"))
		require.Equal(t, "/cfg/a/b\n", ok("create", "-p", "/cfg/a/b", "hello"))
		require.Equal(t, "hello", ok("get", "/cfg/a/b")) // as stored: no newline added off a terminal
		fails(exitExists, "/cfg/a/b: the node exists", "create", "/cfg/a/b")
		fails(exitNoNode, "/cfg/x/y: no parent node /cfg/x (-p creates it)", "create", "/cfg/x/y")

		ok("set", "/cfg/a/b", "second")
		code, _, stderr := runZkrIn(t, env, "\x00\xffbinary\n", "set", "--version", "1", "/cfg/a/b", "-")
		require.Equal(t, 0, code, stderr)
		data, st, err := h.client.Get(ctx, "/cfg/a/b")
		require.NoError(t, err)
		require.Equal(t, []byte("\x00\xffbinary\n"), data)
		require.Equal(t, int32(2), st.Version)
		require.Equal(t, "\x00\xffbinary\n", ok("get", "/cfg/a/b"))
		fails(exitData, "/cfg/a/b: the node's version is not the one given (--version)", "set", "--version", "1", "/cfg/a/b", "x")
		fails(exitNoNode, "/cfg/none: no such node", "set", "/cfg/none", "x")
		fails(exitNoNode, "/cfg/none: no such node", "get", "/cfg/none")

		var got struct {
			Path string   `json:"path"`
			Data blob     `json:"data"`
			Stat nodeStat `json:"stat"`
		}
		require.NoError(t, json.Unmarshal([]byte(ok("get", "--json", "/cfg/a/b")), &got))
		require.Equal(t, "/cfg/a/b", got.Path)
		require.Equal(t, "AP9iaW5hcnkK", got.Data.Base64) // not UTF-8
		require.Equal(t, int32(2), got.Stat.Version)
		require.Equal(t, int32(9), got.Stat.DataLength)

		out := ok("create", "--sequential", "/cfg/job-", "x")
		require.Regexp(t, `^/cfg/job-\d{10}\n$`, out)
		require.Equal(t, "/cfg/box\n", ok("create", "--container", "/cfg/box"))
		code, _, stderr = zkr("create", "--ttl", "1h", "/cfg/ttl")
		require.Equal(t, exitZooKeeper, code, stderr) // zktest's server does not allow TTL nodes
		require.Equal(t, "zkr create: /cfg/ttl: the server does not allow TTL nodes (it needs zookeeper.extendedTypesEnabled=true)\n", stderr)
	})

	t.Run("ls, stat", func(t *testing.T) {
		for _, p := range []string{"/tree", "/tree/b", "/tree/a", "/tree/a/z", "/tree/a/y"} {
			_, err := h.client.Create(ctx, p, nil)
			require.NoError(t, err)
		}
		_, err := h.client.Create(ctx, "/tree/eph", []byte("me"), framework.Ephemeral())
		require.NoError(t, err)
		require.Equal(t, "a\nb\neph\n", ok("ls", "/tree"))
		require.Equal(t, "/tree\n/tree/a\n/tree/a/y\n/tree/a/z\n/tree/b\n/tree/eph\n", ok("ls", "-R", "/tree"))
		require.Equal(t, "", ok("ls", "/tree/b"))
		require.Contains(t, ok("ls", "/"), "tree\nzookeeper\n")
		var list struct {
			Path     string   `json:"path"`
			Children []string `json:"children"`
			Nodes    []string `json:"nodes"`
		}
		require.NoError(t, json.Unmarshal([]byte(ok("ls", "--json", "/tree/b")), &list))
		require.Equal(t, []string{}, list.Children)
		require.NoError(t, json.Unmarshal([]byte(ok("ls", "-R", "--json", "/tree/a")), &list))
		require.Equal(t, []string{"/tree/a", "/tree/a/y", "/tree/a/z"}, list.Nodes)
		fails(exitNoNode, "/tree/none: no such node", "ls", "/tree/none")
		fails(exitNoNode, "/tree/none: no such node", "ls", "-R", "/tree/none")

		var st nodeStat
		require.NoError(t, json.Unmarshal([]byte(ok("stat", "--json", "/tree/eph")), &st))
		require.Equal(t, int32(2), st.DataLength)
		require.Equal(t, fmt.Sprintf("%#x", h.client.SessionID()), st.EphemeralOwner)
		require.NoError(t, json.Unmarshal([]byte(ok("stat", "--json", "/tree")), &st))
		require.Equal(t, int32(3), st.NumChildren)
		require.Equal(t, "0x0", st.EphemeralOwner)
		lines := strings.Split(strings.TrimSpace(ok("stat", "/tree")), "\n")
		require.Len(t, lines, 11)
		require.Equal(t, []string{"num_children", "3"}, strings.Fields(lines[10]))
		// zxids in decimal, as --json and the fencing tokens show them; the session in hex.
		require.Equal(t, []string{"czxid", fmt.Sprint(st.Czxid)}, strings.Fields(lines[0]))
		require.Equal(t, []string{"mzxid", fmt.Sprint(st.Mzxid)}, strings.Fields(lines[1]))
		require.Equal(t, []string{"pzxid", fmt.Sprint(st.Pzxid)}, strings.Fields(lines[2]))
		require.Equal(t, []string{"ephemeral_owner", "0x0"}, strings.Fields(lines[8]))
		fails(exitNoNode, "/tree/none: no such node", "stat", "/tree/none")
	})

	t.Run("rm", func(t *testing.T) {
		for _, p := range []string{"/rm", "/rm/a", "/rm/a/b", "/rm/c"} {
			_, err := h.client.Create(ctx, p, nil)
			require.NoError(t, err)
		}
		fails(exitData, "/rm: the node has children (-r deletes them too)", "rm", "/rm")
		fails(exitData, "/rm/c: the node's version is not the one given (--version)", "rm", "--version", "3", "/rm/c")
		ok("rm", "--version", "0", "/rm/c")
		fails(exitNoNode, "/rm/c: no such node", "rm", "/rm/c")
		fails(exitNoNode, "/rm/c: no such node", "rm", "-r", "/rm/c")
		ok("rm", "-r", "/rm")
		exists, _, err := h.client.Exists(ctx, "/rm")
		require.NoError(t, err)
		require.False(t, exists)
	})
}

// rm -r deletes a subtree that another client is deleting at the same time: the
// nodes gone meanwhile are no error.
func TestShellRemoveRace(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := testCtx(t)
	var leaves []string
	for _, d := range []string{"/race", "/race/a", "/race/b", "/race/c"} {
		_, err := h.client.Create(ctx, d, nil)
		require.NoError(t, err)
	}
	for _, d := range []string{"/race/a", "/race/b", "/race/c"} {
		for i := range 40 {
			p, err := h.client.Create(ctx, d+"/n-", nil, framework.Sequential())
			require.NoError(t, err)
			if i%2 == 0 {
				leaves = append(leaves, p)
			}
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for _, p := range leaves {
			_ = h.client.Delete(ctx, p, -1) // racing zkr: either may delete it
		}
	})
	code, stdout, stderr := runZkr(t, []string{"ZK_SERVERS=" + h.servers}, "rm", "-r", "/race")
	wg.Wait()
	require.Equal(t, 0, code, stderr)
	require.Empty(t, stdout+stderr)
	exists, _, err := h.client.Exists(ctx, "/race")
	require.NoError(t, err)
	require.False(t, exists)
}

// The global flags apply: --namespace puts every path under it.
func TestShellNamespace(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	code, stdout, stderr := runZkr(t, []string{"ZK_SERVERS=" + h.servers}, "--namespace", "app", "create", "-p", "/x/y", "v")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "/x/y\n", stdout)
	data, _, err := h.client.Get(testCtx(t), "/app/x/y")
	require.NoError(t, err)
	require.Equal(t, "v", string(data))
}

// rm -r --version N refuses a PATH whose version is not N before it deletes
// anything: a compare-and-delete that fails must not have emptied the subtree.
func TestShellRemoveRecursiveWrongVersion(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := testCtx(t)
	for _, p := range []string{"/rv", "/rv/a", "/rv/a/b"} {
		_, err := h.client.Create(ctx, p, nil)
		require.NoError(t, err)
	}
	code, stdout, stderr := runZkr(t, []string{"ZK_SERVERS=" + h.servers}, "rm", "-r", "--version", "3", "/rv")
	require.Equal(t, exitData, code, stderr)
	require.Empty(t, stdout)
	require.Equal(t, "zkr rm: /rv: the node's version is not the one given (--version)\n", stderr)
	exists, _, err := h.client.Exists(ctx, "/rv/a/b")
	require.NoError(t, err)
	require.True(t, exists, "a refused rm -r --version deleted the subtree")

	code, _, stderr = runZkr(t, []string{"ZK_SERVERS=" + h.servers}, "rm", "-r", "--version", "0", "/rv")
	require.Equal(t, 0, code, stderr)
	exists, _, err = h.client.Exists(ctx, "/rv")
	require.NoError(t, err)
	require.False(t, exists)
}
