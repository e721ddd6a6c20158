package apicheck

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// ReadRecord reads a record of the API: one line per item, as Generate returns.
func ReadRecord(file string) ([]string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines, nil
}

// WriteRecord writes lines as a record of the API.
func WriteRecord(file string, lines []string) error {
	return os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

// Diff returns the lines of to that from lacks, and those of from that to lacks,
// each sorted.
func Diff(from, to []string) (added, removed []string) {
	in := func(lines []string) map[string]bool {
		set := make(map[string]bool, len(lines))
		for _, l := range lines {
			set[l] = true
		}
		return set
	}
	fromSet, toSet := in(from), in(to)
	for _, l := range to {
		if !fromSet[l] {
			added = append(added, l)
		}
	}
	for _, l := range from {
		if !toSet[l] {
			removed = append(removed, l)
		}
	}
	slices.Sort(added)
	slices.Sort(removed)
	return added, removed
}

// ItemName returns the name by which the changelog must mention the item of an
// API line: its package's last path element, then the identifier, and for a
// method, a field or an interface's method the type's name before the member's:
//
//	pkg github.com/zkrecipes/zkrecipes/framework, type WatchMode int32 -> framework.WatchMode
//	pkg github.com/zkrecipes/zkrecipes/framework, method (*Client) AddWatch(...) -> framework.Client.AddWatch
//	pkg github.com/zkrecipes/zkrecipes/recipes/cache, type Event struct, Path string -> cache.Event.Path
//	pkg .../shared, type Versioned[T any] struct, embedded *framework.Stat -> shared.Versioned.Stat
//	pkg .../framework, type Conn interface, unexported methods -> framework.Conn
func ItemName(line string) (string, error) {
	it, err := parseItem(line)
	if err != nil {
		return "", err
	}
	return it.String(), nil
}

// item is what an API line is about: a name of a package, or a member (a method or
// a field) of one of its types.
type item struct {
	pkg    string // the package's last path element
	name   string // the identifier, or the type of a member
	member string
}

func (it item) String() string {
	s := it.pkg + "." + it.name
	if it.member != "" {
		s += "." + it.member
	}
	return s
}

func parseItem(line string) (item, error) {
	bad := fmt.Errorf("not an API line: %q", line)
	rest, ok := strings.CutPrefix(line, "pkg ")
	if !ok {
		return item{}, bad
	}
	pkgPath, decl, ok := strings.Cut(rest, ", ")
	if !ok {
		return item{}, bad
	}
	it := item{pkg: path.Base(pkgPath)}
	kind, rest, _ := strings.Cut(decl, " ")
	switch kind {
	case "func", "const", "var":
		it.name = ident(rest)
	case "method": // (*Client[K]) Close() error
		recv, method, ok := strings.Cut(rest, ") ")
		if !ok {
			return item{}, bad
		}
		it.name, it.member = ident(strings.TrimLeft(recv, "(*")), ident(method)
		if it.member == "" {
			return item{}, bad
		}
	case "type": // Client struct, Name string
		it.name = ident(rest)
		if _, member, ok := cutOutside(rest, ", "); ok && member != "unexported methods" {
			if typ, ok := strings.CutPrefix(member, "embedded "); ok {
				// An embedded field's name is its type's: *framework.Stat is Stat.
				typ = ident(strings.TrimPrefix(typ, "*"))
				member = typ[strings.LastIndex(typ, ".")+1:]
			}
			if it.member = ident(member); it.member == "" {
				return item{}, bad
			}
		}
	}
	if it.name == "" || strings.Contains(it.name, ".") {
		return item{}, bad
	}
	return it, nil
}

// Required groups changed API lines by the name the changelog must mention for
// them, ItemName's, but for the members of a type whose own line is among them
// (a type added, removed or redeclared): those go with their type, so that a new
// type is told by its name, not by each of its fields and methods.
func Required(changed []string) (map[string][]string, error) {
	items := make([]item, len(changed))
	own := make(map[item]bool) // the types whose own line changed
	for i, l := range changed {
		it, err := parseItem(l)
		if err != nil {
			return nil, err
		}
		items[i] = it
		if it.member == "" {
			own[it] = true
		}
	}
	required := make(map[string][]string)
	for i, it := range items {
		if own[item{pkg: it.pkg, name: it.name}] {
			it.member = ""
		}
		required[it.String()] = append(required[it.String()], changed[i])
	}
	return required, nil
}

// ident returns the identifier, possibly qualified (zk.Stat), that s starts with.
func ident(s string) string {
	end := strings.IndexFunc(s, func(r rune) bool {
		return r != '_' && r != '.' && !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	if end < 0 {
		return s
	}
	return s[:end]
}

// cutOutside cuts s around the first sep that is outside brackets, so that the
// ", " between type parameters ([K comparable, V any]) is not taken for the one
// before a member.
func cutOutside(s, sep string) (before, after string, found bool) {
	depth := 0
	for i, r := range s {
		switch r {
		case '[', '(', '{':
			depth++
		case ']', ')', '}':
			depth--
		}
		if depth == 0 && strings.HasPrefix(s[i:], sep) {
			return s[:i], s[i+len(sep):], true
		}
	}
	return s, "", false
}

// Unreleased returns the text of a Keep a Changelog file's section for the next
// release: what lies between the line "## [Unreleased]" and the next "## " line.
func Unreleased(changelog string) (string, error) {
	lines := strings.SplitAfter(changelog, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != "## [Unreleased]" {
			continue
		}
		end := len(lines)
		for j := i + 1; j < len(lines); j++ {
			if strings.HasPrefix(lines[j], "## ") {
				end = j
				break
			}
		}
		return strings.Join(lines[i+1:end], ""), nil
	}
	return "", errors.New("no \"## [Unreleased]\" section")
}

// codeName is a possibly dotted identifier in a code span: framework.Client.AddWatch.
var codeName = regexp.MustCompile(`[\p{L}\p{N}_]+(\.[\p{L}\p{N}_]+)*`)

// Unmentioned returns the names of items (as ItemName gives them) that the text
// does not mention. A name is mentioned by a dotted identifier in a code span (in
// backticks) that is the name, or the name without its package:
// `framework.Client.AddWatch`, `Client.AddWatch` or `Client.AddWatch(ctx, path)`
// mention framework.Client.AddWatch; `mutex.New` mentions mutex.New and not
// rwlock.New; `New` mentions both. Only code spans count, so that a word of the
// text (New, Close) is not taken for an item.
func Unmentioned(names []string, text string) []string {
	mentioned := make(map[string]bool)
	for i, span := range strings.Split(text, "`") {
		if i%2 == 1 { // between an opening and a closing backtick
			for _, name := range codeName.FindAllString(span, -1) {
				mentioned[name] = true
			}
		}
	}
	var missing []string
	for _, name := range names {
		_, short, _ := strings.Cut(name, ".")
		if !mentioned[name] && !mentioned[short] {
			missing = append(missing, name)
		}
	}
	slices.Sort(missing)
	return slices.Compact(missing)
}

// recordName is the name of a release's record: api/vX.Y.Z.txt.
var recordName = regexp.MustCompile(`^v(\d+)\.(\d+)\.(\d+)\.txt$`)

// LatestRelease returns the path of the record of the latest release in dir (the
// highest vX.Y.Z.txt), or "" if no release has been recorded.
func LatestRelease(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var latest string
	var latestVersion []int
	for _, e := range entries {
		m := recordName.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		version := make([]int, 3)
		for i := range version {
			if version[i], err = strconv.Atoi(m[i+1]); err != nil {
				return "", fmt.Errorf("%s: %w", e.Name(), err)
			}
		}
		if latest == "" || slices.Compare(version, latestVersion) > 0 {
			latest, latestVersion = filepath.Join(dir, e.Name()), version
		}
	}
	return latest, nil
}
