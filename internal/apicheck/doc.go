// Package apicheck keeps a record of the module's exported API, as Go's own
// repository keeps api/go1.*.txt, so that no change to the API goes unnoticed and
// every one is told to users in CHANGELOG.md.
//
// The record, api/next.txt, lists every exported name of the library's public
// packages (framework, zktest and the recipes; not the internal packages, cmd,
// examples, integration, bench or scripts) with its signature, one line per item,
// sorted:
//
//	pkg github.com/zkrecipes/zkrecipes/framework, func New([]string, ...Option) (*Client, error)
//	pkg github.com/zkrecipes/zkrecipes/framework, method (*Client) Close() error
//	pkg github.com/zkrecipes/zkrecipes/framework, type Stat = zk.Stat
//
// Its test, TestAPIIsRecorded, runs with go test ./... (so make test runs it) and
// fails
//
//   - when the API differs from api/next.txt: it lists the lines added and removed.
//     If the change is meant, record it with
//     go test ./internal/apicheck -update
//     which rewrites api/next.txt;
//   - when an item added, removed or changed since the latest release (the highest
//     api/vX.Y.Z.txt; none means no release yet) is not named in CHANGELOG.md's
//     section for the next release, between "## [Unreleased]" and the next "## "
//     heading. An item is named by its package's last path element, its type for a
//     method or a field, and its own name: framework.WatchMode,
//     framework.Client.AddWatch, cache.Cache.Close. The changelog names it in a code
//     span, with or without the package: `framework.Client.AddWatch` or
//     `Client.AddWatch`. Only code spans count, so that a word of the text (New,
//     Close) is not taken for an item.
//
// A release freezes the record: its commit copies api/next.txt to api/vX.Y.Z.txt,
// as it renames the changelog's [Unreleased] section to the version. From then on,
// the changelog's new [Unreleased] section names what changes against that record.
//
// The API is read from source with go/parser and go/types, after one run of
// `go list -deps`, standard library only, so that the module needs no other
// dependency for it. Function bodies are not checked, which keeps the test near a
// second (a few with -race).
package apicheck
