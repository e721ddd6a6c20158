//go:build !linux

package main

import "syscall"

// Only Linux has a parent-death signal: elsewhere a child of a killed zkr lives on.
func setParentDeathSignal(*syscall.SysProcAttr) {}
