// Command shape measures the shape of this module's non-test code, as issue 23
// asks: the fields of its two largest types, its longest functions with their
// complexity, and the exported names of two packages. Run it from the module root:
//
//	go run ./scripts/shape [-n 10]
//
// -n is how many of the longest functions to list.
//
// A type's fields are its own plus those of the types it embeds; its parts are its
// fields whose type is a struct of the same package, listed with their own fields,
// so that splitting a type into parts shows in the listing rather than hiding from
// it. Signals are the fields that are locks, wait groups, channels, contexts or
// cancel functions. Function length is the number of lines between the braces.
// Complexity is gocyclo's: 1, plus one per if, for, range, non-default case, && and
// ||, closures included. Directories with a go.mod of their own (other modules),
// testdata and build are left out.
package main

import (
	"cmp"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// pkg is one directory's non-test files.
type pkg struct {
	dir   string
	files []*ast.File
	types map[string]*ast.StructType
}

func main() {
	n := flag.Int("n", 10, "how many of the longest functions to list")
	flag.Parse()
	fset := token.NewFileSet()
	pkgs, err := load(fset, ".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "shape:", err)
		os.Exit(1)
	}
	for _, t := range []struct{ dir, name string }{{"framework", "Client"}, {"recipes/cache", "Cache"}} {
		p := pkgs[t.dir]
		if p == nil || p.types[t.name] == nil {
			fmt.Printf("%s.%s: not found\n", filepath.Base(t.dir), t.name)
			continue
		}
		fields(p, t.name)
	}
	longest(fset, pkgs, *n)
	for _, dir := range []string{"framework", "recipes/internal/lockqueue"} {
		if p := pkgs[dir]; p != nil {
			exported(p)
		}
	}
}

// load parses every non-test Go file of the module rooted at root, by directory.
func load(fset *token.FileSet, root string) (map[string]*pkg, error) {
	pkgs := map[string]*pkg{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "testdata" || name == "build" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		p := pkgs[dir]
		if p == nil {
			p = &pkg{dir: dir, types: map[string]*ast.StructType{}}
			pkgs[dir] = p
		}
		p.files = append(p.files, f)
		ast.Inspect(f, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok {
				if st, ok := ts.Type.(*ast.StructType); ok {
					p.types[ts.Name.Name] = st
				}
			}
			return true
		})
		return nil
	})
	return pkgs, err
}

// fields prints the field count of type name: its own and its embedded types', then
// its parts'.
func fields(p *pkg, name string) {
	own, signals := 0, 0
	var embedded, parts []string
	seen := map[string]bool{name: true}
	var walk func(string)
	walk = func(t string) {
		for _, f := range p.types[t].Fields.List {
			local := localStruct(p, f.Type)
			if len(f.Names) == 0 && local != "" && !seen[local] { // embedded
				seen[local] = true
				embedded = append(embedded, fmt.Sprintf("%s %d", local, count(p.types[local])))
				walk(local)
				continue
			}
			n := max(len(f.Names), 1)
			own += n
			if isSignal(f.Type) {
				signals += n
			}
			if local != "" && !seen[local] {
				seen[local] = true
				parts = append(parts, local)
			}
		}
	}
	walk(name)
	total := own
	var listed []string
	for _, part := range parts {
		n := count(p.types[part])
		total += n
		listed = append(listed, fmt.Sprintf("%s %d", part, n))
	}
	fmt.Printf("%s.%s: %d fields (%d of them signals)", filepath.Base(p.dir), name, own, signals)
	if len(embedded) > 0 {
		fmt.Printf(", embedding %s", strings.Join(embedded, ", "))
	}
	fmt.Println()
	if len(parts) > 0 {
		fmt.Printf("  with its parts, %d fields: %s\n", total, strings.Join(listed, ", "))
	}
}

// localStruct is the name of the struct type of p that t is, points to or
// instantiates; "" if none.
func localStruct(p *pkg, t ast.Expr) string {
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			if p.types[x.Name] != nil {
				return x.Name
			}
			return ""
		default:
			return ""
		}
	}
}

func count(st *ast.StructType) int {
	n := 0
	for _, f := range st.Fields.List {
		n += max(len(f.Names), 1)
	}
	return n
}

// isSignal says whether a field's type is a lock, a wait group, a once, a channel, a
// context or a cancel function.
func isSignal(t ast.Expr) bool {
	if _, ok := t.(*ast.ChanType); ok {
		return true
	}
	sel, ok := t.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkgName, _ := sel.X.(*ast.Ident)
	switch {
	case pkgName == nil:
		return false
	case pkgName.Name == "sync":
		return true
	case pkgName.Name == "context":
		return true
	}
	return false
}

type function struct {
	name       string
	pos        token.Position
	lines, cyc int
}

// longest prints the n longest functions with their complexity.
func longest(fset *token.FileSet, pkgs map[string]*pkg, n int) {
	var fns []function
	for _, p := range pkgs {
		for _, f := range p.files {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				fns = append(fns, function{
					name:  p.dir + "." + funcName(fd),
					pos:   fset.Position(fd.Pos()),
					lines: fset.Position(fd.Body.Rbrace).Line - fset.Position(fd.Body.Lbrace).Line - 1,
					cyc:   complexity(fd.Body),
				})
			}
		}
	}
	slices.SortFunc(fns, func(a, b function) int {
		return cmp.Or(cmp.Compare(b.lines, a.lines), cmp.Compare(a.name, b.name))
	})
	fmt.Printf("longest functions (of %d): lines, complexity\n", len(fns))
	for _, f := range fns[:min(n, len(fns))] {
		fmt.Printf("  %3d %3d  %s\n", f.lines, f.cyc, f.name)
	}
}

func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	return recvName(fd.Recv.List[0].Type) + "." + fd.Name.Name
}

func recvName(t ast.Expr) string {
	switch x := t.(type) {
	case *ast.StarExpr:
		return recvName(x.X)
	case *ast.IndexExpr:
		return recvName(x.X)
	case *ast.IndexListExpr:
		return recvName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return "?"
}

func complexity(body ast.Node) int {
	c := 1
	ast.Inspect(body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			c++
		case *ast.CaseClause:
			if x.List != nil {
				c++
			}
		case *ast.CommClause:
			if x.Comm != nil {
				c++
			}
		case *ast.BinaryExpr:
			if x.Op == token.LAND || x.Op == token.LOR {
				c++
			}
		}
		return true
	})
	return c
}

// exported prints how many exported names p declares: top-level funcs, types, vars
// and consts, and the methods of exported types, listed by type.
func exported(p *pkg) {
	kinds := map[string]int{}
	methods := map[string]int{}
	for _, f := range p.files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				switch {
				case !d.Name.IsExported():
				case d.Recv == nil:
					kinds["funcs"]++
				case !ast.IsExported(recvName(d.Recv.List[0].Type)): // not part of the API
				default:
					kinds["methods"]++
					methods[recvName(d.Recv.List[0].Type)]++
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							kinds["types"]++
						}
					case *ast.ValueSpec:
						for _, id := range s.Names {
							if id.IsExported() {
								kinds[strings.ToLower(d.Tok.String())+"s"]++
							}
						}
					}
				}
			}
		}
	}
	total := 0
	for _, k := range kinds {
		total += k
	}
	fmt.Printf("%s: %d exported names (funcs %d, types %d, vars %d, consts %d, methods %d)\n",
		p.dir, total, kinds["funcs"], kinds["types"], kinds["vars"], kinds["consts"], kinds["methods"])
	var byType []string
	for t, n := range methods {
		byType = append(byType, fmt.Sprintf("%s %d", t, n))
	}
	slices.Sort(byType)
	fmt.Printf("  exported methods by type: %s\n", strings.Join(byType, ", "))
}
