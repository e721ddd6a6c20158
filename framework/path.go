package framework

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ErrInvalidPath is wrapped by every path error of this package. Paths are checked
// on our side so that a typo fails at once with a reason, instead of as
// go-zookeeper's bare ErrInvalidPath, or a server-side error, after a round trip.
var ErrInvalidPath = errors.New("framework: invalid path")

// ErrInvalidNamespace is wrapped by the error for an invalid client namespace.
var ErrInvalidNamespace = errors.New("framework: invalid namespace")

// reservedPath is ZooKeeper's own subtree (quotas, the ensemble configuration).
// Nothing of ours may write there, and a namespace there would put every recipe
// node inside it.
const reservedPath = "/zookeeper"

// ValidatePath reports whether p is a path ZooKeeper accepts, as its PathUtils
// decides: absolute, no trailing slash (except the root "/"), no empty, "." or ".."
// segment, and none of the characters ZooKeeper refuses. Those are the control
// characters U+0000–U+001F and U+007F–U+009F, and U+D800–U+F8FF and U+FFF0–U+FFFF,
// ranges that hold surrogates and private-use or special characters. ZooKeeper's
// check runs on UTF-16, so a character above U+FFFF (an emoji, say) reaches it as a
// surrogate pair and is refused too; so is invalid UTF-8, which the server would
// decode into a different path than the one we meant. ZooKeeper's own range checks
// exclude the end points of each range; we refuse them as well, since no sensible
// path needs them.
//
// The error wraps ErrInvalidPath and names the path and the reason.
func ValidatePath(p string) error {
	if reason := pathProblem(p); reason != "" {
		return fmt.Errorf("%w %q: %s", ErrInvalidPath, p, reason)
	}
	return nil
}

// pathProblem returns why p is not a valid ZooKeeper path, or "" if it is.
func pathProblem(p string) string {
	switch {
	case p == "":
		return "empty"
	case p[0] != '/':
		return `does not start with "/"`
	case p == "/":
		return ""
	case p[len(p)-1] == '/':
		return `ends with "/"`
	case !utf8.ValidString(p):
		return "not valid UTF-8"
	}
	// Cut, not Split: this runs on every request, and Split allocates.
	for rest, more := p[1:], true; more; {
		var seg string
		seg, rest, more = strings.Cut(rest, "/")
		switch seg {
		case "":
			return "empty segment"
		case ".", "..":
			return fmt.Sprintf("relative segment %q", seg)
		}
	}
	for i, r := range p {
		if !pathRuneAllowed(r) {
			return fmt.Sprintf("character %U at byte %d not allowed", r, i)
		}
	}
	return ""
}

func pathRuneAllowed(r rune) bool {
	switch {
	case r <= 0x1f, 0x7f <= r && r <= 0x9f: // control characters
		return false
	case 0xd800 <= r && r <= 0xf8ff: // surrogates and private use
		return false
	case 0xfff0 <= r: // specials, and everything a UTF-16 surrogate pair would carry
		return false
	}
	return true
}

// validateWritePath is ValidatePath for paths we create, change or delete: it also
// refuses ZooKeeper's reserved subtree "/zookeeper", which the server manages. Pass
// the full path, namespace included: under a namespace, the user's "/zookeeper" is
// an ordinary node.
func validateWritePath(p string) error {
	if err := ValidatePath(p); err != nil {
		return err
	}
	if isReserved(p) {
		return fmt.Errorf("%w %q: %q is reserved for ZooKeeper itself", ErrInvalidPath, p, reservedPath)
	}
	return nil
}

func isReserved(p string) bool {
	return p == reservedPath || strings.HasPrefix(p, reservedPath+"/")
}

// validateNamespace checks a client namespace. Following Curator, a namespace is
// written without slashes at either end ("app" or "app/sub") and is the first
// segments of every path the client touches, so "/"+ns must be a valid path outside
// "/zookeeper". The empty namespace means none.
func validateNamespace(ns string) error {
	if ns == "" {
		return nil
	}
	var reason string
	switch {
	case ns[0] == '/':
		reason = `starts with "/"`
	case ns[len(ns)-1] == '/':
		reason = `ends with "/"`
	case isReserved("/" + ns):
		reason = fmt.Sprintf("%q is reserved for ZooKeeper itself", reservedPath)
	default:
		reason = pathProblem("/" + ns)
	}
	if reason != "" {
		return fmt.Errorf("%w %q: %s", ErrInvalidNamespace, ns, reason)
	}
	return nil
}

// joinNamespace turns the user's path p into the server's path under namespace ns.
// The user's root is the namespace node itself.
func joinNamespace(ns, p string) string {
	switch {
	case ns == "":
		return p
	case p == "/":
		return "/" + ns
	}
	return "/" + ns + p
}

// stripNamespace turns a server path into the user's path: the inverse of
// joinNamespace. A path outside the namespace (which a watch event or a
// multi-result should never carry) is returned unchanged rather than mangled.
func stripNamespace(ns, p string) string {
	if ns == "" {
		return p
	}
	root := "/" + ns
	switch {
	case p == root:
		return "/"
	case strings.HasPrefix(p, root+"/"):
		return p[len(root):]
	}
	return p
}

// parentPath returns the parent of a valid path: "/a/b" → "/a", "/a" → "/". The
// root is its own parent, so a walk up the tree ends there. Invalid input gives
// some string, never a panic.
func parentPath(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

// baseName returns the last segment of a path: "/a/b" → "b", "/" → "". Invalid input
// gives some string, never a panic.
func baseName(p string) string {
	return p[strings.LastIndexByte(p, '/')+1:]
}
