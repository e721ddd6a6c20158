package apicheck

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var update = flag.Bool("update", false, "rewrite api/next.txt with the exported API as it is now")

// root is the module's root, from this package's directory, where go test runs.
var root = filepath.Join("..", "..")

// moduleAPI is Generate(root), run once for the tests that read it (TestAPIIsRecorded,
// TestContract): it type-checks the module and its dependencies, the most of this
// package's time.
var moduleAPI = sync.OnceValues(func() ([]string, error) { return Generate(root) })

// TestAPIIsRecorded holds the exported API to its record, api/next.txt, and every
// change to that record since the latest release to a mention in CHANGELOG.md (see
// the package's documentation).
func TestAPIIsRecorded(t *testing.T) {
	watchModule(t)
	lines, err := moduleAPI()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines { // the changelog's rule must be able to name every item
		if _, err := ItemName(l); err != nil {
			t.Error(err)
		}
	}
	next := filepath.Join(root, "api", "next.txt")
	if *update {
		if err := WriteRecord(next, lines); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s: %d lines", next, len(lines))
	} else {
		recorded, err := ReadRecord(next)
		if errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s is missing; write it with: go test ./internal/apicheck -update", next)
		} else if err != nil {
			t.Fatal(err)
		}
		if added, removed := Diff(recorded, lines); len(added)+len(removed) > 0 {
			t.Errorf("the exported API differs from its record, api/next.txt (- recorded, + as it is now):\n%s"+
				"If the change is meant, record it with: go test ./internal/apicheck -update\n"+
				"and say it in CHANGELOG.md's [Unreleased] section.", changes(added, removed))
		}
	}
	checkChangelog(t, next)
}

// checkChangelog requires CHANGELOG.md's [Unreleased] section to name every item
// that the record next changes since the latest release's record.
func checkChangelog(t *testing.T, next string) {
	t.Helper()
	release, err := LatestRelease(filepath.Join(root, "api"))
	if err != nil {
		t.Fatal(err)
	}
	if release == "" {
		t.Log("no release recorded in api/: no change to require in the changelog")
		return
	}
	version := strings.TrimSuffix(filepath.Base(release), ".txt")
	released, err := ReadRecord(release)
	if err != nil {
		t.Fatal(err)
	}
	recorded, err := ReadRecord(next)
	if err != nil {
		t.Fatal(err)
	}
	added, removed := Diff(released, recorded)
	if len(added)+len(removed) == 0 {
		return
	}
	required, err := Required(slices.Concat(added, removed))
	if err != nil {
		t.Fatal(err)
	}
	changelog, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	section, err := Unreleased(string(changelog))
	if err != nil {
		t.Fatalf("CHANGELOG.md: %v; the exported API changed since %s and the changelog must say how", err, version)
	}
	missing := Unmentioned(slices.Collect(maps.Keys(required)), section)
	if len(missing) == 0 {
		return
	}
	isAdded := make(map[string]bool, len(added))
	for _, l := range added {
		isAdded[l] = true
	}
	var b strings.Builder
	for _, name := range missing {
		b.WriteString("  " + name + "\n")
		for _, l := range required[name] {
			sign := "-"
			if isAdded[l] {
				sign = "+"
			}
			fmt.Fprintf(&b, "      %s %s\n", sign, l)
		}
	}
	_, short, _ := strings.Cut(missing[0], ".")
	t.Errorf("the exported API changed since %s (api/%s.txt to api/next.txt), "+
		"and CHANGELOG.md's [Unreleased] section does not name:\n%s"+
		"Name each in a code span, with or without its package (`%s` or `%s`), in the entry that says what changed.",
		version, version, b.String(), missing[0], short)
}

// changes writes lines removed and added as a diff does.
func changes(added, removed []string) string {
	var b strings.Builder
	for _, l := range removed {
		b.WriteString("- " + l + "\n")
	}
	for _, l := range added {
		b.WriteString("+ " + l + "\n")
	}
	return b.String()
}

// watchModule opens every directory of the module. go test caches a passing result
// until a file the test opened changes: Generate reads the packages' files, but a
// file or a package added is in none of them. go test records the listing of a
// directory opened, so adding one runs the test again.
func watchModule(t *testing.T) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
			name == "testdata" || path == filepath.Join(root, "build")) { // what go list skips, and make's output
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
