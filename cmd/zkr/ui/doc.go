// Package ui holds the page that zkr ui serves: its HTML, script and style,
// embedded in the binary so that the page needs no asset from anywhere else (no
// CDN, nothing fetched at run time). The server and the JSON API it reads are
// in package main (cmd/zkr/ui*.go); docs/ui.md describes both.
//
// The script builds every piece of the page with DOM calls and sets text with
// textContent, never with innerHTML: a node's name or data is shown as text
// whatever it holds. The server's Content-Security-Policy forbids inline
// scripts and handlers as a second line of defence.
package ui
