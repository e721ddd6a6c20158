package main

import (
	"io"
	"os"
	"os/signal"
	"syscall"
)

// childGuardName is the guard's argv[0], which main looks for and ps shows.
const childGuardName = "zkr-guard"

// guardReady is what the guard writes once it ignores the group's signals.
var guardReady = []byte("ready\n")

// isChildGuard tells main that this process is a guard, started by startGuard.
func isChildGuard() bool { return len(os.Args) == 1 && os.Args[0] == childGuardName }

// runChildGuard is the guard: it leads the process group that zkr runs CMD in, and
// kills that group when zkr is gone. zkr holds the only writer of the guard's stdin,
// so a read sees the end of it when zkr closes it or when zkr dies, even by
// SIGKILL, which zkr itself cannot outlive. The guard ignores what is sent to the
// group (zkr's forwarded signals, the terminal's Ctrl-C, Ctrl-Z, its hangup when
// the shell above zkr ends): only SIGKILL or the end of its stdin ends it. It says
// so on stdout, and zkr starts CMD in the group only then: a guard still starting
// would die of those signals and leave the group unguarded.
func runChildGuard() {
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT,
		syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU, syscall.SIGUSR1, syscall.SIGUSR2)
	_, _ = os.Stdout.Write(guardReady)
	_ = os.Stdout.Close()
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = syscall.Kill(0, syscall.SIGKILL) // the group we lead: CMD, what it started, and us
}
