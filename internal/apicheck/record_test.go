package apicheck

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestDiff(t *testing.T) {
	added, removed := Diff([]string{"a", "b", "c"}, []string{"b", "d", "c", "e"})
	if !slices.Equal(added, []string{"d", "e"}) || !slices.Equal(removed, []string{"a"}) {
		t.Errorf("Diff = added %q, removed %q; want [d e], [a]", added, removed)
	}
	if added, removed := Diff([]string{"a"}, []string{"a"}); added != nil || removed != nil {
		t.Errorf("Diff of equal records = %q, %q; want nothing", added, removed)
	}
}

func TestItemName(t *testing.T) {
	const fw = "pkg github.com/zkrecipes/zkrecipes/framework, "
	for line, want := range map[string]string{
		fw + "func New([]string, ...Option) (*Client, error)":                             "framework.New",
		fw + "func Map[S ~[]E, E any](S, func(E) E) S":                                    "framework.Map",
		fw + "const PermAll = 31":                                                         "framework.PermAll",
		fw + "const Connected ConnectionState = 1":                                        "framework.Connected",
		fw + "var ErrClosed error":                                                        "framework.ErrClosed",
		fw + "type WatchMode int32":                                                       "framework.WatchMode",
		fw + "type Stat = zk.Stat":                                                        "framework.Stat",
		fw + "type Client struct":                                                         "framework.Client",
		fw + "method (*Client) AddWatch(context.Context, string, WatchMode) error":        "framework.Client.AddWatch",
		fw + "method (ConnectionState) String() string":                                   "framework.ConnectionState.String",
		fw + "method (*Set[K, V]) Add(K, V)":                                              "framework.Set.Add",
		fw + "type Config struct, Members []Member":                                       "framework.Config.Members",
		fw + "type Set[K comparable, V any] struct, Items map[K]V":                        "framework.Set.Items",
		fw + "type Client struct, embedded *Base":                                         "framework.Client.Base",
		fw + "type Node struct, embedded zk.Stat":                                         "framework.Node.Stat",
		fw + "type ErrorPolicy interface":                                                 "framework.ErrorPolicy",
		fw + "type ErrorPolicy interface, IsError(ConnectionState) bool":                  "framework.ErrorPolicy.IsError",
		fw + "type Conn interface, unexported methods":                                    "framework.Conn",
		"pkg github.com/zkrecipes/zkrecipes/recipes/cache, method (*Cache) Close() error": "cache.Cache.Close",
	} {
		got, err := ItemName(line)
		if err != nil || got != want {
			t.Errorf("ItemName(%q) = %q, %v; want %q", line, got, err, want)
		}
	}
	for _, line := range []string{"", "func New()", "pkg p, method Close()", "pkg p, type ", "pkg p, gadget X"} {
		if got, err := ItemName(line); err == nil {
			t.Errorf("ItemName(%q) = %q; want an error", line, got)
		}
	}
}

func TestRequired(t *testing.T) {
	const p = "pkg example.com/p, "
	got, err := Required([]string{
		p + "type Mode int32",                 // a new type
		p + "method (Mode) String() string",   // goes with it
		p + "type Client struct, Name string", // a new field of a type that did not change
		p + "method (*Client) Sync() error",
		p + "method (*Client) Sync(context.Context) error", // the same method, changed
	})
	want := map[string][]string{
		"p.Mode":        {p + "type Mode int32", p + "method (Mode) String() string"},
		"p.Client.Name": {p + "type Client struct, Name string"},
		"p.Client.Sync": {p + "method (*Client) Sync() error", p + "method (*Client) Sync(context.Context) error"},
	}
	if err != nil || !maps.EqualFunc(got, want, slices.Equal) {
		t.Errorf("Required = %q, %v; want %q", got, err, want)
	}
	if _, err := Required([]string{"pkg p, gadget X"}); err == nil {
		t.Error("Required of a malformed line: no error")
	}
}

func TestUnreleased(t *testing.T) {
	const changelog = "# Changelog\n\nIntro.\n\n## [Unreleased]\n\n### Added\n\n- `Client.AddWatch`.\n\n## [0.1.0] - 2025-01-01\n\n- `Old`.\n"
	got, err := Unreleased(changelog)
	if want := "\n### Added\n\n- `Client.AddWatch`.\n\n"; err != nil || got != want {
		t.Errorf("Unreleased = %q, %v; want %q", got, err, want)
	}
	got, err = Unreleased("## [Unreleased]\n- last section\n")
	if want := "- last section\n"; err != nil || got != want {
		t.Errorf("Unreleased of a last section = %q, %v; want %q", got, err, want)
	}
	if _, err := Unreleased("# Changelog\n\n## [0.1.0]\n- `New`\n"); err == nil {
		t.Error("Unreleased of a changelog without the section: no error")
	}
}

func TestUnmentioned(t *testing.T) {
	const section = "- `framework.Client.AddWatch(ctx, path, mode)` and `WatchMode`.\n" +
		"- `mutex.New` checks its path. New and Close are words here.\n" +
		"```go\nc.Sync(ctx, \"/\")\n```\n"
	names := []string{
		"framework.Client.AddWatch", // qualified
		"framework.WatchMode",       // without its package
		"mutex.New",                 // qualified
		"rwlock.New",                // not: `mutex.New` is another package's
		"cache.Cache.Close",         // not: a word outside a code span
		"framework.Client.Sync",     // not: c.Sync is not Client.Sync
		"framework.Client.Sync",     // named once
	}
	got := Unmentioned(names, section)
	if want := []string{"cache.Cache.Close", "framework.Client.Sync", "rwlock.New"}; !slices.Equal(got, want) {
		t.Errorf("Unmentioned = %q; want %q", got, want)
	}
}

func TestLatestRelease(t *testing.T) {
	dir := t.TempDir()
	if got, err := LatestRelease(dir); err != nil || got != "" {
		t.Errorf("LatestRelease of no release = %q, %v; want \"\"", got, err)
	}
	for _, name := range []string{"next.txt", "README.md", "v0.1.0.txt", "v0.9.1.txt", "v0.10.0.txt", "v1.0.0-rc.1.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := LatestRelease(dir); err != nil || got != filepath.Join(dir, "v0.10.0.txt") {
		t.Errorf("LatestRelease = %q, %v; want v0.10.0.txt, which is after v0.9.1", got, err)
	}
}

func TestRecordRoundTrip(t *testing.T) {
	file := filepath.Join(t.TempDir(), "next.txt")
	lines := []string{"pkg p, func A()", "pkg p, func B()"}
	if err := WriteRecord(file, lines); err != nil {
		t.Fatal(err)
	}
	got, err := ReadRecord(file)
	if err != nil || !slices.Equal(got, lines) {
		t.Errorf("ReadRecord = %q, %v; want %q", got, err, lines)
	}
}
