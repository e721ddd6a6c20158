//go:build !linux

package main

import "os"

// Without Linux's job control (child_linux.go), a CMD on zkr's terminal shares zkr's
// process group, so that it can read the terminal; elsewhere it gets a group of its
// own and a guard.

func selfExe() string {
	exe, err := os.Executable()
	if err != nil {
		return os.Args[0]
	}
	return exe
}

func sharesGroup(f *os.File) bool { return isTerminal(f) }

// ctty: no terminal is handed to CMD's group here.
type ctty struct{ fd int }

func controllingTerminal(*os.File) *ctty { return nil }
func (t *ctty) inForeground() bool       { return false }
func (t *ctty) takeBack(int)             {}
func (c *child) jobControl() func()      { return func() {} }
