package framework_test

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// The aliases are go-zookeeper's own: a type converts without a conversion, and an
// error matches errors.Is either way, wrapped or not.
var (
	_ *zk.Stat     = (*framework.Stat)(nil)
	_ zk.Event     = framework.Event{}
	_ []zk.ACL     = framework.WorldACL(framework.PermAll)
	_ zk.Dialer    = framework.Dialer(nil)
	_ zk.EventType = framework.EventNodeDeleted
)

func TestAliasedErrorsAreGoZookeepers(t *testing.T) {
	for _, pair := range []struct{ ours, theirs error }{
		{framework.ErrNoNode, zk.ErrNoNode},
		{framework.ErrNodeExists, zk.ErrNodeExists},
		{framework.ErrBadVersion, zk.ErrBadVersion},
		{framework.ErrNotEmpty, zk.ErrNotEmpty},
		{framework.ErrNoAuth, zk.ErrNoAuth},
		{framework.ErrInvalidACL, zk.ErrInvalidACL},
		{framework.ErrAuthFailed, zk.ErrAuthFailed},
		{framework.ErrNoChildrenForEphemerals, zk.ErrNoChildrenForEphemerals},
		{framework.ErrSessionExpired, zk.ErrSessionExpired},
		{framework.ErrConnectionClosed, zk.ErrConnectionClosed},
		{framework.ErrNoServer, zk.ErrNoServer},
		{framework.ErrSessionMoved, zk.ErrSessionMoved},
	} {
		require.ErrorIs(t, fmt.Errorf("wrapped: %w", pair.theirs), pair.ours)
		require.ErrorIs(t, fmt.Errorf("wrapped: %w", pair.ours), pair.theirs)
	}
	require.Equal(t, zk.WorldACL(zk.PermRead|zk.PermWrite), framework.WorldACL(framework.PermRead|framework.PermWrite))
	require.Equal(t, zk.DigestACL(zk.PermAll, "u", "p"), framework.DigestACL(framework.PermAll, "u", "p"))
	require.Equal(t, zk.AuthACL(zk.PermAll), framework.AuthACL(framework.PermAll))
}

// TestClientErrorsMatchTheAliases: what the server refuses comes back as an error a
// program checks with this package's names alone.
func TestClientErrorsMatchTheAliases(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t)
	ctx := zkrtest.Context(t)
	c := zkrtest.Client(t, []string{srv.Addr()})

	_, _, err := c.Get(ctx, "/missing")
	require.ErrorIs(t, err, framework.ErrNoNode)
	_, err = c.Create(ctx, "/a/b", nil, framework.CreatingParents())
	require.NoError(t, err)
	_, err = c.Create(ctx, "/a/b", nil)
	require.ErrorIs(t, err, framework.ErrNodeExists)
	_, err = c.Set(ctx, "/a/b", []byte("x"), 7)
	require.ErrorIs(t, err, framework.ErrBadVersion)
	require.ErrorIs(t, c.Delete(ctx, "/a", -1), framework.ErrNotEmpty)

	_, err = c.Create(ctx, "/private", nil, framework.Ephemeral())
	require.NoError(t, err)
	owner := zkrtest.Client(t, []string{srv.Addr()}, framework.WithAuth("digest", []byte("u:p")),
		framework.WithACL(framework.FixedACL(framework.DigestACL(framework.PermAll, "u", "p")...)))
	_, err = owner.Create(ctx, "/owned", nil)
	require.NoError(t, err)
	_, _, err = c.Get(ctx, "/owned")
	require.ErrorIs(t, err, framework.ErrNoAuth, "the digest ACL refuses a client without the credentials")
	_, _, err = owner.Get(ctx, "/owned")
	require.NoError(t, err)
}

// TestExamplesImportOnlyZkrecipes: a program written from this module's runnable
// examples, example programs or docs imports only zkrecipes: every go-zookeeper name
// a user needs is re-exported by this package.
func TestExamplesImportOnlyZkrecipes(t *testing.T) {
	const banned = "github.com/go-zookeeper/zk"
	root := filepath.Join("..")
	fset := token.NewFileSet()
	checked := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); p != root && (strings.HasPrefix(name, ".") || name == "build" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		switch {
		case strings.HasSuffix(p, ".go"):
			f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			if !strings.HasPrefix(rel, "examples/") && !hasExample(f) {
				return nil
			}
			checked[rel] = true
			for _, imp := range f.Imports {
				if path, _ := strconv.Unquote(imp.Path.Value); path == banned {
					t.Errorf("%s imports %s: use framework's aliases", rel, banned)
				}
			}
		case strings.HasPrefix(rel, "docs/") && strings.HasSuffix(p, ".md"):
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, block := range goBlock.FindAll(data, -1) {
				checked[rel] = true
				if bytes.Contains(block, []byte(strconv.Quote(banned))) {
					t.Errorf("a Go block in %s imports %s: use framework's aliases", rel, banned)
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
	for _, known := range []string{"framework/example_test.go", "recipes/election/example_test.go", "examples/scheduler/main.go"} {
		require.True(t, checked[known], "the walk checked %s", known)
	}
}

var goBlock = regexp.MustCompile("(?s)```go\n.*?```")

// hasExample reports whether f declares a runnable example.
func hasExample(f *ast.File) bool {
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Example") {
			return true
		}
	}
	return false
}
