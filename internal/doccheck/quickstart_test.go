package doccheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// TestQuickStartRuns runs the quick start (the README's lock, docs/quickstart.md's
// poller and config) as written, as a reader would against `zkr dev`: each program
// built from its block, given ZK_SERVERS, several copies at once where the text says
// so. Each must exit 0, say what it did, and leave no lock or election node behind.
func TestQuickStartRuns(t *testing.T) {
	root := moduleRoot(t)
	programs := map[string]string{ // heading → the program's directory
		"A lock around a critical section":   "lock",
		"Electing one poller among replicas": "poller",
		"Following a config subtree":         "config",
	}
	dir := buildDir(t, root)
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	for _, file := range []string{"README.md", filepath.Join("docs", "quickstart.md")} {
		text, err := os.ReadFile(filepath.Join(root, file))
		require.NoError(t, err)
		for _, b := range GoBlocks(file, text) {
			name, ok := programs[b.Heading]
			if !ok {
				continue
			}
			delete(programs, b.Heading)
			sub := filepath.Join(dir, "src", name)
			require.NoError(t, os.MkdirAll(sub, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(sub, "main.go"), []byte(b.Source), 0o644))
			rel, err := filepath.Rel(root, sub)
			require.NoError(t, err)
			args = append(args, "./"+filepath.ToSlash(rel))
		}
	}
	require.Empty(t, programs, "the quick start has lost these headings (or their ```go blocks)")
	build := exec.Command("go", args...)
	build.Dir = root
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	srv := zktest.NewServer(t)
	c := zkrtest.Client(t, []string{srv.Addr()})
	run := func(t *testing.T, name string, copies int) []string {
		t.Helper()
		outs := make([]string, copies)
		errs := make([]error, copies)
		var wg sync.WaitGroup
		for i := range copies {
			wg.Go(func() {
				cmd := exec.CommandContext(zkrtest.Context(t), filepath.Join(dir, name))
				cmd.Env = append(os.Environ(), "ZK_SERVERS="+srv.Addr())
				b, err := cmd.CombinedOutput()
				outs[i], errs[i] = string(b), err
			})
		}
		wg.Wait()
		for i := range copies {
			require.NoError(t, errs[i], "%s, copy %d:\n%s", name, i, outs[i])
		}
		return outs
	}
	token := func(t *testing.T, re *regexp.Regexp, out string) string {
		t.Helper()
		m := re.FindStringSubmatch(out)
		require.NotNil(t, m, "%q in:\n%s", re, out)
		return m[1]
	}

	t.Run("lock", func(t *testing.T) {
		tokens := map[string]bool{}
		for _, out := range run(t, "lock", 2) {
			tokens[token(t, regexp.MustCompile(`holding the lock, fencing token (\d+)\n`), out)] = true
		}
		require.Len(t, tokens, 2, "two holders, two tokens")
		require.Empty(t, zkrtest.Children(t, c, "/quickstart/locks/report"))
	})
	t.Run("poller", func(t *testing.T) {
		tokens := map[string]bool{}
		for _, out := range run(t, "poller", 3) {
			tokens[token(t, regexp.MustCompile(`leading, fencing token (\d+)\npolled\n`), out)] = true
		}
		require.Len(t, tokens, 3, "each replica led in a term of its own")
		require.Empty(t, zkrtest.Children(t, c, "/quickstart/poller"))
	})
	t.Run("config", func(t *testing.T) {
		// The first run creates the key; the second finds it in the copy and sets it.
		out := run(t, "config", 1)[0]
		require.Regexp(t, `(?m)^Created /quickstart/config/poll-interval = "30s"$`, out)
		out = run(t, "config", 1)[0]
		require.Regexp(t, `(?m)^/quickstart/config/poll-interval = "30s"$`, out)
		require.Regexp(t, `(?m)^Changed /quickstart/config/poll-interval = "30s"$`, out)
	})
}
