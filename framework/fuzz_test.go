package framework

import (
	"strings"
	"testing"
)

func FuzzValidatePath(f *testing.F) {
	for _, p := range []string{"/", "/a", "/a/b", "", "a", "/a/", "//", "/a/./b", "/a/../b", "/zookeeper", "/\x00", "/é/ü", "/a b"} {
		f.Add(p, "ns")
	}
	f.Fuzz(func(t *testing.T, p, ns string) {
		err := ValidatePath(p)
		if err != nil {
			return
		}
		if !strings.HasPrefix(p, "/") || strings.Contains(p, "//") || (p != "/" && strings.HasSuffix(p, "/")) {
			t.Fatalf("%q passed validation", p)
		}
		if validateNamespace(ns) != nil {
			return
		}
		full := joinNamespace(ns, p)
		if ValidatePath(full) != nil {
			t.Fatalf("%q under namespace %q gives the invalid %q", p, ns, full)
		}
		if back := stripNamespace(ns, full); back != p {
			t.Fatalf("%q -> %q -> %q", p, full, back)
		}
	})
}

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
	})
}
