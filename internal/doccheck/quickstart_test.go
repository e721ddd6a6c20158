package doccheck

import (
	"fmt"
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

// program is a documented ```go block built into a program: a whole program as it
// is, or a function of a guide's with a driver of the test's that calls it
// (driverMain, then driver).
type program struct {
	file, heading string // where the block is
	name          string // the program's directory and binary
	driver        string // "" for a whole program
}

// buildPrograms builds each program into dir, all in one go build.
func buildPrograms(t *testing.T, root, dir string, programs []program) {
	t.Helper()
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	for _, p := range programs {
		text, err := os.ReadFile(filepath.Join(root, p.file))
		require.NoError(t, err)
		var block *Block
		for _, b := range GoBlocks(p.file, text) {
			if b.Heading == p.heading {
				block = &b
				break
			}
		}
		require.NotNil(t, block, "%s has lost the heading %q (or its ```go block)", p.file, p.heading)
		sub := filepath.Join(dir, "src", p.name)
		rel, err := filepath.Rel(root, sub)
		require.NoError(t, err)
		src := filepath.Join(sub, "main.go")
		if p.driver != "" {
			require.NoError(t, os.MkdirAll(filepath.Join(sub, "block"), 0o755))
			driver := fmt.Sprintf(driverMain, "github.com/zkrecipes/zkrecipes/"+filepath.ToSlash(rel)+"/block") + p.driver
			require.NoError(t, os.WriteFile(src, []byte(driver), 0o644))
			src = filepath.Join(sub, "block", "block.go")
		}
		require.NoError(t, os.MkdirAll(sub, 0o755))
		require.NoError(t, os.WriteFile(src, []byte(block.Source), 0o644))
		args = append(args, "./"+filepath.ToSlash(rel))
	}
	build := exec.Command("go", args...)
	build.Dir = root
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
}

// TestQuickStartRuns runs the quick start (the README's lock, docs/quickstart.md's
// poller and config) as written, as a reader would against `zkr dev`: each program
// built from its block, given ZK_SERVERS, several copies at once where the text says
// so. Each must exit 0, say what it did, and leave no lock or election node behind.
// The guides' loops run too, through drivers that end their ctx (loops_test.go).
func TestQuickStartRuns(t *testing.T) {
	root := moduleRoot(t)
	dir := buildDir(t, root)
	buildPrograms(t, root, dir, append([]program{
		{file: "README.md", heading: "A lock around a critical section", name: "lock"},
		{file: "docs/quickstart.md", heading: "Electing one poller among replicas", name: "poller"},
		{file: "docs/quickstart.md", heading: "Following a config subtree", name: "config"},
	}, loops...))

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
	runLoops(t, dir, srv.Addr(), c)
}
