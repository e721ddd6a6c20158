package apicheck

import (
	"fmt"
	"go/types"
	"slices"
	"strings"
)

// Lines returns one line for every exported item of pkg, sorted. The form is Go's
// api/go1.txt's, with type parameters written as declared:
//
//	pkg example.com/p, func New([]string, ...Option) (*Client, error)
//	pkg example.com/p, method (*Client) Close() error
//	pkg example.com/p, type Client struct
//	pkg example.com/p, type Client struct, Name string
//	pkg example.com/p, type Client struct, embedded *Base
//	pkg example.com/p, type Conn interface, Close() error
//	pkg example.com/p, type Conn interface, unexported methods
//	pkg example.com/p, type Mode int32
//	pkg example.com/p, type Stat = zk.Stat
//	pkg example.com/p, type Set[T comparable] struct
//	pkg example.com/p, const ModeA Mode = 1
//	pkg example.com/p, const Max = 10
//	pkg example.com/p, var ErrClosed error
//
// Types of other packages are qualified by their package's name, the package's
// own are not. Methods are those of the method sets of T and *T, promoted ones
// included (they are callable, so part of the API), written with the receiver T
// when T's method set has them.
func Lines(pkg *types.Package) []string {
	q := qualifier(pkg)
	var lines []string
	add := func(format string, args ...any) {
		lines = append(lines, "pkg "+pkg.Path()+", "+fmt.Sprintf(format, args...))
	}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch obj := obj.(type) {
		case *types.Func:
			sig := obj.Type().(*types.Signature)
			add("func %s%s%s", name, typeParams(sig.TypeParams(), q), signature(sig, q))
		case *types.Var:
			add("var %s %s", name, typeString(obj.Type(), q))
		case *types.Const:
			if isUntyped(obj.Type()) {
				add("const %s = %s", name, obj.Val().ExactString())
			} else {
				add("const %s %s = %s", name, typeString(obj.Type(), q), obj.Val().ExactString())
			}
		case *types.TypeName:
			lines = append(lines, typeLines(pkg, obj, q)...)
		}
	}
	slices.Sort(lines)
	return lines
}

// isInternal says whether a package is internal: only its module may import it.
func isInternal(path string) bool {
	return slices.Contains(strings.Split(path, "/"), "internal")
}

// typeLines are the lines of one exported type: its declaration, its exported
// fields or interface methods, and its exported methods.
func typeLines(pkg *types.Package, obj *types.TypeName, q types.Qualifier) []string {
	prefix := "pkg " + pkg.Path() + ", "
	var lines []string
	t := obj.Type()
	if alias, ok := t.(*types.Alias); ok {
		lines = append(lines, prefix+"type "+obj.Name()+typeParams(alias.TypeParams(), q)+" = "+typeString(alias.Rhs(), q))
		// An alias is the only name outside the module of an internal package's
		// type (mutex.Participant = lockqueue.Participant): that type's fields and
		// methods are then this package's API, listed under the alias's name.
		t = types.Unalias(alias)
		if n, ok := t.(*types.Named); !ok || n.Obj().Pkg() == nil || !isInternal(n.Obj().Pkg().Path()) {
			return lines
		}
	}
	named, ok := t.(*types.Named)
	if !ok { // not found in a package's scope: its other type names are defined types
		return lines
	}
	tparams := named.TypeParams()
	decl := "type " + obj.Name() + typeParams(tparams, q)
	switch under := named.Underlying().(type) {
	case *types.Struct:
		decl += " struct"
		lines = append(lines, prefix+decl)
		for f := range under.Fields() {
			switch {
			case !f.Exported():
			case f.Embedded():
				lines = append(lines, prefix+decl+", embedded "+typeString(f.Type(), q))
			default:
				lines = append(lines, prefix+decl+", "+f.Name()+" "+typeString(f.Type(), q))
			}
		}
	case *types.Interface:
		decl += " interface"
		lines = append(lines, prefix+decl)
		unexported := false
		for m := range under.Methods() { // the whole method set, embedded interfaces' too
			if !m.Exported() {
				unexported = true
				continue
			}
			lines = append(lines, prefix+decl+", "+m.Name()+signature(m.Type().(*types.Signature), q))
		}
		if unexported { // then no other package can implement it
			lines = append(lines, prefix+decl+", unexported methods")
		}
		return lines // an interface's methods are listed above, not as methods
	default:
		lines = append(lines, prefix+decl+" "+typeString(under, q))
	}

	// The receiver as written in a method declaration: T, or T[K, V] when generic.
	recv := obj.Name()
	if tparams.Len() > 0 {
		names := make([]string, tparams.Len())
		for i := range names {
			names[i] = tparams.At(i).Obj().Name()
		}
		recv += "[" + strings.Join(names, ", ") + "]"
	}
	value := types.NewMethodSet(named)
	pointer := types.NewMethodSet(types.NewPointer(named))
	for sel := range pointer.Methods() {
		m := sel.Obj()
		if !m.Exported() {
			continue
		}
		r := "*" + recv
		if value.Lookup(m.Pkg(), m.Name()) != nil {
			r = recv
		}
		lines = append(lines, prefix+"method ("+r+") "+m.Name()+signature(sel.Type().(*types.Signature), q))
	}
	return lines
}

// signature writes a signature without its parameters' names, as api/go1.txt does:
// the names are not part of the API. ([]string, ...Option) (*Client, error)
func signature(sig *types.Signature, q types.Qualifier) string {
	var b strings.Builder
	b.WriteString("(")
	params := sig.Params()
	for i := range params.Len() {
		if i > 0 {
			b.WriteString(", ")
		}
		t := params.At(i).Type()
		if sig.Variadic() && i == params.Len()-1 {
			b.WriteString("..." + typeString(t.(*types.Slice).Elem(), q))
		} else {
			b.WriteString(typeString(t, q))
		}
	}
	b.WriteString(")")
	results := sig.Results()
	switch results.Len() {
	case 0:
	case 1:
		b.WriteString(" " + typeString(results.At(0).Type(), q))
	default:
		b.WriteString(" (")
		for i := range results.Len() {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(typeString(results.At(i).Type(), q))
		}
		b.WriteString(")")
	}
	return b.String()
}

// typeString writes a type as types.TypeString does, but for the parameters of
// function types, which it writes without their names, as signature does:
// func(context.Context) error, not func(ctx context.Context) error.
func typeString(t types.Type, q types.Qualifier) string {
	switch t := t.(type) {
	case *types.Signature:
		return "func" + signature(t, q)
	case *types.Pointer:
		return "*" + typeString(t.Elem(), q)
	case *types.Slice:
		return "[]" + typeString(t.Elem(), q)
	case *types.Array:
		return fmt.Sprintf("[%d]%s", t.Len(), typeString(t.Elem(), q))
	case *types.Map:
		return "map[" + typeString(t.Key(), q) + "]" + typeString(t.Elem(), q)
	case *types.Chan:
		elem := typeString(t.Elem(), q)
		switch t.Dir() {
		case types.SendOnly:
			return "chan<- " + elem
		case types.RecvOnly:
			return "<-chan " + elem
		}
		if c, ok := t.Elem().(*types.Chan); ok && c.Dir() == types.RecvOnly {
			elem = "(" + elem + ")" // chan (<-chan T), not chan<- (chan T)
		}
		return "chan " + elem
	case *types.Named:
		return typeName(t.Obj(), t.TypeArgs(), q)
	case *types.Alias:
		return typeName(t.Obj(), t.TypeArgs(), q)
	}
	// Basic types, type parameters, and literal struct and interface types, whose
	// fields and methods keep their names.
	return types.TypeString(t, q)
}

// typeName writes a named type or an alias, qualified, with its type arguments.
func typeName(obj *types.TypeName, args *types.TypeList, q types.Qualifier) string {
	name := obj.Name()
	if obj.Pkg() != nil && q(obj.Pkg()) != "" {
		name = q(obj.Pkg()) + "." + name
	}
	if args.Len() == 0 {
		return name
	}
	list := make([]string, args.Len())
	for i := range list {
		list[i] = typeString(args.At(i), q)
	}
	return name + "[" + strings.Join(list, ", ") + "]"
}

// typeParams writes type parameters as declared: [K comparable, V any].
func typeParams(tparams *types.TypeParamList, q types.Qualifier) string {
	if tparams.Len() == 0 {
		return ""
	}
	list := make([]string, tparams.Len())
	for i := range list {
		tp := tparams.At(i)
		list[i] = tp.Obj().Name() + " " + typeString(tp.Constraint(), q)
	}
	return "[" + strings.Join(list, ", ") + "]"
}

// qualifier names the types of other packages by their package's name (zk.Stat,
// time.Duration) and those of pkg by their own name.
func qualifier(pkg *types.Package) types.Qualifier {
	return func(other *types.Package) string {
		if other == pkg {
			return ""
		}
		return other.Name()
	}
}

func isUntyped(t types.Type) bool {
	b, ok := t.(*types.Basic)
	return ok && b.Info()&types.IsUntyped != 0
}
