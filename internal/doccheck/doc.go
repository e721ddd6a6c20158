// Package doccheck keeps the documentation true: its tests compile every ```go block
// of README.md and docs/*.md, and run the quick start (README.md's, docs/quickstart.md's)
// against a real ZooKeeper.
//
// The convention: every ```go block is a complete Go file, gofmt'd, that compiles
// inside this module (package main, or any other package with its imports), so that
// a reader can copy it as it is. Anything else (shell, output, Java, fragments) is
// fenced as ```sh, ```text, ```java or ```json.
package doccheck
