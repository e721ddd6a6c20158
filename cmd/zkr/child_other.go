//go:build !linux

package main

import (
	"os"
	"syscall"
)

// Only Linux has a parent-death signal: elsewhere a child of a killed zkr lives on.
func setParentDeathSignal(*syscall.SysProcAttr) {}

// isTerminal is a guess outside Linux: a character device, which /dev/null is too.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
