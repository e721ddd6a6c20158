// Package lifecycle is the one lifecycle of the recipes that start and close
// (cache, group, nodes, partition, the election's latch and selector, the shared
// value and count): Curator's LATENT, STARTED, CLOSED, moved by compare-and-set, and
// the errors for a second Start and for a call after Close, named once. It is also
// where a recipe learns that its client closed: its own context ends then, with a
// cause wrapping framework.ErrClosed.
package lifecycle
