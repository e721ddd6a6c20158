// Package integration holds the tests that cross packages and processes: Go
// participants beside Apache Curator's own recipes on the same paths (the Curator
// peer in bench/curator-peer), and faults against real ensembles.
package integration
