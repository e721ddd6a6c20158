package main

import (
	"os"

	"golang.org/x/term"
)

// isTerminal asks the terminal driver, since a character device need not be a
// terminal (cron's stdin is often /dev/null).
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
