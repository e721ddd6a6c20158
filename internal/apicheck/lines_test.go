package apicheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"strings"
	"testing"
)

// testPackages are small packages that show every kind of line: p uses the others.
// Of note: Client has base's Close, promoted, and Participant, an alias of an
// internal package's type, has that type's fields and methods.
var testPackages = []struct{ path, src string }{
	{"example.com/m/internal/queue", `package queue

type Participant struct {
	ID   string
	node string
}

func (Participant) Holds() bool { return false }
`},
	{"example.com/m/zk", `package zk

type Stat struct{ Version int32 }
`},
	{"example.com/m/p", `package p

import (
	"example.com/m/internal/queue"
	"example.com/m/zk"
)

const Max = 10
const ModeA Mode = 1
const name = "p"

type Mode int32

func (Mode) String() string { return "" }

var ErrClosed error

type Stat = zk.Stat
type Participant = queue.Participant

type base struct{ Shared int }

func (*base) Close() error { return nil }

type Client struct {
	*base
	zk.Stat
	Name    string
	stat    zk.Stat
	Watches chan (<-chan zk.Stat)
}

func New(servers []string, opts ...Option) (*Client, error) { return nil, nil }

type Option func(c *Client) error

func (c *Client) Retry(fn func(stat *zk.Stat, n int) error) {}
func (c *Client) private()                                 {}

type Closer interface{ Close() error }

type Conn interface {
	Closer
	Send(data []byte) (n int, err error)
	seal()
}

type Set[T comparable] struct{ Items map[T]bool }

func (s *Set[T]) Add(v T) {}

func Map[S ~[]E, E any](s S, f func(E) E) S { return s }

func unexported() {}
`},
}

func TestLines(t *testing.T) {
	fset := token.NewFileSet()
	checked := make(map[string]*types.Package)
	var pkg *types.Package
	for _, p := range testPackages {
		f, err := parser.ParseFile(fset, p.path+".go", p.src, 0)
		if err != nil {
			t.Fatal(err)
		}
		conf := types.Config{Importer: importerFunc(func(path string) (*types.Package, error) { return checked[path], nil })}
		if pkg, err = conf.Check(p.path, fset, []*ast.File{f}, nil); err != nil {
			t.Fatal(err)
		}
		checked[p.path] = pkg
	}
	want := `
pkg example.com/m/p, const Max = 10
pkg example.com/m/p, const ModeA Mode = 1
pkg example.com/m/p, func Map[S ~[]E, E any](S, func(E) E) S
pkg example.com/m/p, func New([]string, ...Option) (*Client, error)
pkg example.com/m/p, method (*Client) Retry(func(*zk.Stat, int) error)
pkg example.com/m/p, method (*Set[T]) Add(T)
pkg example.com/m/p, method (Client) Close() error
pkg example.com/m/p, method (Mode) String() string
pkg example.com/m/p, method (Participant) Holds() bool
pkg example.com/m/p, type Client struct
pkg example.com/m/p, type Client struct, Name string
pkg example.com/m/p, type Client struct, Watches chan (<-chan zk.Stat)
pkg example.com/m/p, type Client struct, embedded zk.Stat
pkg example.com/m/p, type Closer interface
pkg example.com/m/p, type Closer interface, Close() error
pkg example.com/m/p, type Conn interface
pkg example.com/m/p, type Conn interface, Close() error
pkg example.com/m/p, type Conn interface, Send([]byte) (int, error)
pkg example.com/m/p, type Conn interface, unexported methods
pkg example.com/m/p, type Mode int32
pkg example.com/m/p, type Option func(*Client) error
pkg example.com/m/p, type Participant = queue.Participant
pkg example.com/m/p, type Participant struct
pkg example.com/m/p, type Participant struct, ID string
pkg example.com/m/p, type Set[T comparable] struct
pkg example.com/m/p, type Set[T comparable] struct, Items map[T]bool
pkg example.com/m/p, type Stat = zk.Stat
pkg example.com/m/p, var ErrClosed error
`
	if got := "\n" + strings.Join(Lines(pkg), "\n") + "\n"; got != want {
		t.Errorf("Lines =%s\nwant%s", got, want)
	}
}
