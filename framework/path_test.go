package framework

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// oddPaths are inputs that must never make a path helper panic.
var oddPaths = []string{
	"", "/", "//", "///", "a", "a/", "/a/", ".", "..", "/.", "/..", "\x00", "/\x00",
	"\xff", "/\xff", "/a//b", "/a/../b", "ns", "/ns", "/ns/", "/nsx", "/ns/a", "é", "/😀",
}

func TestValidatePath(t *testing.T) {
	tests := []struct {
		path   string
		reason string // "" when valid
	}{
		{"/", ""},
		{"/a", ""},
		{"/a/b/c", ""},
		{"/locks/_c_0f8fad5b-d9cb-469f-a165-70867728950e-lock-0000000007", ""},
		{"/a.b", ""},
		{"/.a", ""},
		{"/a.", ""},
		{"/...", ""},
		{"/a/..b", ""},
		{"/a b", ""},
		{"/zookeeper", ""}, // readable; validateWritePath refuses it
		{"/é/ü/日本", ""},
		{"/\u00a0", ""}, // first character after the C1 controls
		{"/\uf900", ""}, // first character after the private-use area
		{"/\uffef", ""}, // last character before the specials
		{"", "empty"},
		{"a", `does not start with "/"`},
		{"a/b", `does not start with "/"`},
		{" /a", `does not start with "/"`},
		{"/a/", `ends with "/"`},
		{"//", `ends with "/"`},
		{"//a", "empty segment"},
		{"/a//b", "empty segment"},
		{"/.", `relative segment "."`},
		{"/..", `relative segment ".."`},
		{"/a/./b", `relative segment "."`},
		{"/a/../b", `relative segment ".."`},
		{"/a/..", `relative segment ".."`},
		{"/\x00", "character U+0000 at byte 1 not allowed"},
		{"/a\x1fb", "character U+001F at byte 2 not allowed"},
		{"/a\tb", "character U+0009 at byte 2 not allowed"},
		{"/a\nb", "character U+000A at byte 2 not allowed"},
		{"/\x7f", "character U+007F at byte 1 not allowed"},
		{"/ab\u0085", "character U+0085 at byte 3 not allowed"},
		{"/\u009f", "character U+009F at byte 1 not allowed"},
		{"/\ue000", "character U+E000 at byte 1 not allowed"},
		{"/x\uf8ff", "character U+F8FF at byte 2 not allowed"},
		{"/\ufff0", "character U+FFF0 at byte 1 not allowed"},
		{"/\ufffd", "character U+FFFD at byte 1 not allowed"},
		{"/\uffff", "character U+FFFF at byte 1 not allowed"},
		{"/😀", "character U+1F600 at byte 1 not allowed"},
		{"/\xff", "not valid UTF-8"},
		{"/a\xed\xa0\x80", "not valid UTF-8"}, // a surrogate encoded in UTF-8
	}
	for _, tt := range tests {
		err := ValidatePath(tt.path)
		if tt.reason == "" {
			require.NoError(t, err, "%q", tt.path)
			continue
		}
		require.ErrorIs(t, err, ErrInvalidPath, "%q", tt.path)
		require.EqualError(t, err, `framework: invalid path `+strconv.Quote(tt.path)+`: `+tt.reason)
	}
}

func TestValidateWritePath(t *testing.T) {
	for _, p := range []string{"/", "/a", "/zoo", "/zookeeperx", "/zookeeper2/a", "/a/zookeeper"} {
		require.NoError(t, validateWritePath(p), p)
	}
	for _, p := range []string{"/zookeeper", "/zookeeper/quota", "/zookeeper/config/x"} {
		err := validateWritePath(p)
		require.ErrorIs(t, err, ErrInvalidPath, p)
		require.EqualError(t, err, `framework: invalid path `+strconv.Quote(p)+`: "/zookeeper" is reserved for ZooKeeper itself`)
	}
	// Ordinary path errors come first, unchanged.
	require.EqualError(t, validateWritePath("/zookeeper/"), `framework: invalid path "/zookeeper/": ends with "/"`)
	require.ErrorIs(t, validateWritePath("rel"), ErrInvalidPath)
}

func TestValidateNamespace(t *testing.T) {
	tests := []struct {
		ns     string
		reason string // "" when valid
	}{
		{"", ""},
		{"app", ""},
		{"app/sub", ""},
		{"a.b", ""},
		{"zookeeperx", ""},
		{"app/zookeeper", ""},
		{"/app", `starts with "/"`},
		{"/", `starts with "/"`},
		{"app/", `ends with "/"`},
		{"app//sub", "empty segment"},
		{".", `relative segment "."`},
		{"app/..", `relative segment ".."`},
		{"a\x00", "character U+0000 at byte 2 not allowed"},
		{"a\xff", "not valid UTF-8"},
		{"zookeeper", `"/zookeeper" is reserved for ZooKeeper itself`},
		{"zookeeper/app", `"/zookeeper" is reserved for ZooKeeper itself`},
	}
	for _, tt := range tests {
		err := validateNamespace(tt.ns)
		if tt.reason == "" {
			require.NoError(t, err, "%q", tt.ns)
			continue
		}
		require.ErrorIs(t, err, ErrInvalidNamespace, "%q", tt.ns)
		require.EqualError(t, err, `framework: invalid namespace `+strconv.Quote(tt.ns)+`: `+tt.reason)
	}
}

func TestNamespaceJoinStrip(t *testing.T) {
	tests := []struct{ ns, user, server string }{
		{"", "/", "/"},
		{"", "/a/b", "/a/b"},
		{"ns", "/", "/ns"},
		{"ns", "/a", "/ns/a"},
		{"ns", "/a/b", "/ns/a/b"},
		{"app/sub", "/", "/app/sub"},
		{"app/sub", "/lock", "/app/sub/lock"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.server, joinNamespace(tt.ns, tt.user), "join(%q, %q)", tt.ns, tt.user)
		require.Equal(t, tt.user, stripNamespace(tt.ns, tt.server), "strip(%q, %q)", tt.ns, tt.server)
	}

	// Paths outside the namespace come back unchanged.
	for _, p := range []string{"/", "/other", "/nsx", "/nsx/a", "/n", "", "ns", "ns/a", "/a/ns"} {
		require.Equal(t, p, stripNamespace("ns", p), "strip(ns, %q)", p)
	}

	for _, p := range oddPaths {
		require.NotPanics(t, func() { _, _, _ = joinNamespace("ns", p), stripNamespace("ns", p), stripNamespace("", p) }, "%q", p)
	}
}

func TestParentPathBaseName(t *testing.T) {
	tests := []struct{ path, parent, base string }{
		{"/", "/", ""},
		{"/a", "/", "a"},
		{"/a/b", "/a", "b"},
		{"/a/b/c", "/a/b", "c"},
		{"/locks/_c_0f8fad5b-d9cb-469f-a165-70867728950e-lock-0000000007", "/locks",
			"_c_0f8fad5b-d9cb-469f-a165-70867728950e-lock-0000000007"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.parent, parentPath(tt.path), "parentPath(%q)", tt.path)
		require.Equal(t, tt.base, baseName(tt.path), "baseName(%q)", tt.path)
	}

	// A walk up the tree ends at the root.
	p, steps := "/a/b/c/d", 0
	for p != "/" {
		p = parentPath(p)
		steps++
	}
	require.Equal(t, 4, steps)

	for _, p := range oddPaths {
		require.NotPanics(t, func() { _, _ = parentPath(p), baseName(p) }, "%q", p)
		require.NotPanics(t, func() { _ = ValidatePath(p); _ = validateWritePath(p); _ = validateNamespace(p) }, "%q", p)
	}
}
