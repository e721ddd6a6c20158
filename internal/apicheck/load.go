package apicheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// Generate returns the exported API of the public packages of the module in root,
// one line per item (see Lines), sorted. The public packages are the module's
// packages but the internal ones, commands, and those under cmd, examples,
// integration, bench and scripts.
func Generate(root string) ([]string, error) {
	pkgs, err := listModule(root)
	if err != nil {
		return nil, err
	}
	c := &checker{fset: token.NewFileSet(), listed: pkgs, done: make(map[string]*types.Package)}
	var lines []string
	for _, p := range pkgs {
		if !isPublic(p) {
			continue
		}
		pkg, err := c.check(p.ImportPath)
		if err != nil {
			return nil, err
		}
		lines = append(lines, Lines(pkg)...)
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("no exported API found in the module in %s", root)
	}
	slices.Sort(lines)
	return lines, nil
}

// listed is what `go list` says of one package.
type listed struct {
	ImportPath string
	Name       string
	Dir        string
	GoFiles    []string
	ImportMap  map[string]string // import path in the source -> package (vendored std)
	DepOnly    bool              // a dependency, not matched by ./...
	Module     *struct{ Path string }
}

// listModule runs `go list -deps ./...` in root: every package of the module and
// everything they import. One run of the go command for all of them: go/build's
// module support, which the "source" importer uses, runs it once per import path,
// and that took 11 s here.
//
// CGO_ENABLED=0 picks the pure-Go files of the standard library, which go/types
// can check without running cgo; the module itself has no cgo.
func listModule(root string) (map[string]*listed, error) {
	cmd := exec.Command("go", "list", "-deps", "-json=ImportPath,Name,Dir,GoFiles,ImportMap,DepOnly,Module", "./...")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list in %s: %v\n%s", root, err, stderr.Bytes())
	}
	pkgs := make(map[string]*listed)
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		p := new(listed)
		if err := dec.Decode(p); errors.Is(err, io.EOF) {
			return pkgs, nil
		} else if err != nil {
			return nil, fmt.Errorf("reading go list's output: %w", err)
		}
		pkgs[p.ImportPath] = p
	}
}

// excluded are the module's top directories that hold no library package: the CLI,
// examples, tests across recipes, the benchmarks (their own module) and scripts.
var excluded = []string{"cmd", "examples", "integration", "bench", "scripts"}

// isPublic says whether a package is one of the library's public packages: in the
// module, not under an internal or excluded directory, and not a command.
func isPublic(p *listed) bool {
	if p.DepOnly || p.Module == nil || p.Name == "main" {
		return false
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, p.Module.Path), "/")
	parts := strings.Split(rel, "/")
	return !slices.Contains(excluded, parts[0]) && !slices.Contains(parts, "internal")
}

// checker type-checks packages from source, each once, the imports first.
// Function bodies are skipped: an API is made of declarations, and skipping them
// makes checking the module and its 200 dependencies take a second, not ten.
type checker struct {
	fset   *token.FileSet
	listed map[string]*listed
	done   map[string]*types.Package
}

func (c *checker) check(path string) (*types.Package, error) {
	if path == "unsafe" {
		return types.Unsafe, nil
	}
	if pkg := c.done[path]; pkg != nil {
		return pkg, nil
	}
	p := c.listed[path]
	if p == nil {
		return nil, fmt.Errorf("package %s is not among go list's", path)
	}
	files := make([]*ast.File, 0, len(p.GoFiles))
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(c.fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	conf := types.Config{
		IgnoreFuncBodies: true,
		Sizes:            types.SizesFor("gc", runtime.GOARCH),
		Importer: importerFunc(func(imp string) (*types.Package, error) {
			if to, ok := p.ImportMap[imp]; ok {
				imp = to
			}
			return c.check(imp)
		}),
	}
	pkg, err := conf.Check(path, c.fset, files, nil)
	if err != nil {
		return nil, fmt.Errorf("type-checking %s: %w", path, err)
	}
	c.done[path] = pkg
	return pkg, nil
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }
