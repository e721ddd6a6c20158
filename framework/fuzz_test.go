package framework

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// The fuzz targets check the path and name helpers against reference models written
// apart from them, as plainly as possible.

// modelPathOK is ZooKeeper's PathUtils.validatePath written out again: absolute, no
// empty, "." or ".." segment, and none of the UTF-16 code units it refuses (end
// points included, as our doc says), so a character above U+FFFF, which becomes a
// surrogate pair, is refused too. Invalid UTF-8 is refused: the server would read
// another path than ours.
func modelPathOK(p string) bool {
	if !utf8.ValidString(p) || !strings.HasPrefix(p, "/") {
		return false
	}
	if p == "/" {
		return true
	}
	for _, seg := range strings.Split(p, "/")[1:] {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	for _, u := range utf16.Encode([]rune(p)) {
		if u <= 0x1f || 0x7f <= u && u <= 0x9f || 0xd800 <= u && u <= 0xf8ff || 0xfff0 <= u {
			return false
		}
	}
	return true
}

// modelReserved: the server's own subtree is the one whose first segment is
// "zookeeper".
func modelReserved(full string) bool {
	first, _, _ := strings.Cut(strings.TrimPrefix(full, "/"), "/")
	return first == "zookeeper"
}

func FuzzValidatePath(f *testing.F) {
	for _, p := range []string{"/", "/a", "/a/b", "", "a", "/a/", "//", "/a/./b", "/a/../b", "/zookeeper", "/\x00", "/é/ü", "/a b"} {
		f.Add(p, "ns")
	}
	f.Fuzz(func(t *testing.T, p, ns string) {
		err := ValidatePath(p)
		if ok := modelPathOK(p); ok != (err == nil) {
			t.Fatalf("ValidatePath(%q) = %v; the model says valid: %v", p, err, ok)
		}
		if err != nil {
			if !errors.Is(err, ErrInvalidPath) || !strings.Contains(err.Error(), strconv.Quote(p)) {
				t.Fatalf("ValidatePath(%q): %v neither wraps ErrInvalidPath nor names the path", p, err)
			}
			return
		}
		if p != "/" && joinPath(parentPath(p), baseName(p)) != p {
			t.Fatalf("%q splits into %q and %q", p, parentPath(p), baseName(p))
		}

		nsErr := validateNamespace(ns)
		nsOK := ns == "" || !strings.HasPrefix(ns, "/") && modelPathOK("/"+ns) && !modelReserved("/"+ns)
		if nsOK != (nsErr == nil) {
			t.Fatalf("validateNamespace(%q) = %v; the model says valid: %v", ns, nsErr, nsOK)
		}
		if nsErr != nil {
			if !errors.Is(nsErr, ErrInvalidNamespace) {
				t.Fatalf("validateNamespace(%q): %v does not wrap ErrInvalidNamespace", ns, nsErr)
			}
			return
		}
		full := joinNamespace(ns, p)
		if ValidatePath(full) != nil {
			t.Fatalf("%q under namespace %q gives the invalid %q", p, ns, full)
		}
		if back := stripNamespace(ns, full); back != p {
			t.Fatalf("%q -> %q -> %q", p, full, back)
		}
		if (validateWritePath(full) != nil) != modelReserved(full) {
			t.Fatalf("writes to %q (namespace %q): %v", p, ns, validateWritePath(full))
		}
	})
}

// protectedForm is Curator's protected name: "_c_", a UUID in the dashed 8-4-4-4-12
// form of hex digits in either case, "-", and at least one more byte.
var protectedForm = regexp.MustCompile(`(?s)^_c_[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}-.+$`)

func FuzzProtectedName(f *testing.F) {
	f.Add("_c_0f8fad5b-d9cb-469f-a165-70867728950e-lock-0000000007")
	f.Add("_c_0f8fad5bd9cb469fa16570867728950e-lock-0000000007")
	f.Add("_c_")
	f.Add("lock-0000000001")
	f.Fuzz(func(t *testing.T, name string) {
		id, ok := ProtectedID(name)
		if ok != IsProtectedName(name) {
			t.Fatalf("ProtectedID and IsProtectedName disagree on %q", name)
		}
		if want := protectedForm.MatchString(name); ok != want {
			t.Fatalf("IsProtectedName(%q) = %v; the model says %v", name, ok, want)
		}
		stripped := StripProtection(name)
		if !ok {
			if stripped != name {
				t.Fatalf("an unprotected name %q was stripped to %q", name, stripped)
			}
			return
		}
		if protectedName(id, stripped) != name {
			t.Fatalf("%q does not come back from id %q and name %q", name, id, stripped)
		}
		// Any name we protect is recognised, with our id, and says what its id says.
		for _, anyoneReads := range []bool{false, true} {
			_, mine := protectedPath("/", stripped, anyoneReads)
			ours := protectedName(mine, stripped)
			if got, ok := ProtectedID(ours); !ok || got != mine || saysAnyoneReads(ours) != anyoneReads {
				t.Fatalf("our protected %q (anyone reads: %v) is read back as %q, %v, %v",
					ours, anyoneReads, got, ok, saysAnyoneReads(ours))
			}
		}
	})
}
