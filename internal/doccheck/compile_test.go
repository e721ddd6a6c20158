package doccheck

import (
	"bytes"
	"fmt"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestDocBlocksCompile holds every ```go block of README.md and docs/*.md to the
// package's convention: a complete, gofmt'd Go file that go vet accepts inside this
// module.
func TestDocBlocksCompile(t *testing.T) {
	root := moduleRoot(t)
	blocks := docBlocks(t, root)
	if len(blocks) == 0 {
		t.Fatal("no ```go block found in README.md or docs/*.md")
	}
	dir := buildDir(t, root)
	var pkgs []string
	for i, b := range blocks {
		where := fmt.Sprintf("%s:%d", b.File, b.Line)
		f, err := parser.ParseFile(token.NewFileSet(), "", b.Source, parser.PackageClauseOnly)
		if err != nil {
			t.Errorf("%s: not a complete Go file (it must start with a package clause): %v", where, err)
			continue
		}
		if formatted, err := format.Source([]byte(b.Source)); err == nil && !bytes.Equal(formatted, []byte(b.Source)) {
			t.Errorf("%s: not gofmt'd; gofmt would write:\n%s", where, formatted)
		}
		name := "block.go"
		if strings.HasSuffix(f.Name.Name, "_test") {
			name = "block_test.go"
		}
		sub := filepath.Join(dir, fmt.Sprintf("%03d", i))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, name), []byte(b.Source), 0o644); err != nil {
			t.Fatal(err)
		}
		rel, err := filepath.Rel(root, sub)
		if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, "./"+filepath.ToSlash(rel))
	}
	if len(pkgs) == 0 {
		return
	}
	cmd := exec.Command("go", append([]string{"vet"}, pkgs...)...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("go vet of the documentation's blocks: %v\n%s", err, sourceLines(blocks, dir, root, string(out)))
	}
}

// docBlocks reads the ```go blocks of README.md and docs/*.md.
func docBlocks(t *testing.T, root string) []Block {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []Block
	for _, path := range append([]string{filepath.Join(root, "README.md")}, docs...) {
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, path)
		blocks = append(blocks, GoBlocks(rel, text)...)
	}
	return blocks
}

// sourceLines rewrites go vet's positions in the copies (…/007/block.go:12:3) as the
// Markdown file's (docs/cache.md:131:3), so that a failure points at the text to fix.
func sourceLines(blocks []Block, dir, root, out string) string {
	rel, _ := filepath.Rel(root, dir)
	pos := regexp.MustCompile(`(?:\./)?` + regexp.QuoteMeta(filepath.ToSlash(rel)) + `/(\d{3})/block(?:_test)?\.go:(\d+)`)
	return pos.ReplaceAllStringFunc(out, func(m string) string {
		sub := pos.FindStringSubmatch(m)
		i, _ := strconv.Atoi(sub[1])
		line, _ := strconv.Atoi(sub[2])
		if i >= len(blocks) {
			return m
		}
		return fmt.Sprintf("%s:%d", blocks[i].File, blocks[i].Line+line-1)
	})
}

// moduleRoot is the directory of this module's go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// buildDir is a directory inside the module, so that the blocks compile with its
// go.mod, removed after the test. Its name starts with _, which keeps it out of
// ./... patterns: a go vet ./... running meanwhile does not see the copies.
func buildDir(t *testing.T, root string) string {
	t.Helper()
	parent := filepath.Join(root, "build")
	if err := os.MkdirAll(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(parent, "_doccheck-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}
