package main

import (
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// Job control for CMD on zkr's terminal, as a shell does it for its jobs: CMD's
// process group has the terminal while zkr would have it, so that it reads the
// terminal and gets its Ctrl-C; when CMD stops (Ctrl-Z), zkr takes the terminal
// back and stops too, so that the shell above zkr sees its job stopped; when the
// shell continues zkr (fg, bg), zkr continues CMD, with the terminal if zkr has it.

// selfExe is zkr's own program, to start the guard with: it works even when the
// file was replaced since zkr started.
func selfExe() string { return "/proc/self/exe" }

// sharesGroup: on Linux CMD always gets a process group of its own.
func sharesGroup(*os.File) bool { return false }

// ctty is zkr's controlling terminal, which CMD may read.
type ctty struct {
	fd  int
	zkr int // zkr's process group
}

// controllingTerminal is f as zkr's controlling terminal, or nil if it is not one
// (not a terminal, or another session's: reading it stops nobody).
func controllingTerminal(f *os.File) *ctty {
	if !isTerminal(f) {
		return nil
	}
	fd := int(f.Fd())
	if _, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP); err != nil {
		return nil
	}
	return &ctty{fd: fd, zkr: syscall.Getpgrp()}
}

// foreground is the terminal's foreground process group, or 0.
func (t *ctty) foreground() int {
	if t == nil {
		return 0
	}
	pg, err := unix.IoctlGetInt(t.fd, unix.TIOCGPGRP)
	if err != nil {
		return 0
	}
	return pg
}

// inForeground tells whether zkr has the terminal: not when it runs in the
// background (zkr lock ... &), whose CMD must not take the terminal from the shell.
func (t *ctty) inForeground() bool { return t != nil && t.foreground() == t.zkr }

// give makes pgid the terminal's foreground group. SIGTTOU is ignored meanwhile,
// since zkr may ask from the background; zkr starts no process meanwhile, which
// would inherit that.
func (t *ctty) give(pgid int) {
	signal.Ignore(syscall.SIGTTOU)
	defer signal.Reset(syscall.SIGTTOU)
	_ = unix.IoctlSetPointerInt(t.fd, unix.TIOCSPGRP, pgid)
}

// takeBack gives zkr the terminal again if pgid, CMD's group, has it.
func (t *ctty) takeBack(pgid int) {
	if pgid != 0 && t.foreground() == pgid {
		t.give(t.zkr)
	}
}

// jobControl follows CMD's group until stop is called: when it stops, zkr stops
// too, and when zkr continues, so does CMD. It listens from now on, before CMD runs.
func (c *child) jobControl() (stop func()) {
	if c.tty == nil || c.pgid == 0 {
		return func() {}
	}
	if c.tty.foreground() == c.pgid && !underJobControl() {
		// Nothing would continue a stopped CMD, and zkr hears only of its own
		// children's stops: the terminal's Ctrl-Z may stop a grandchild alone (one
		// that CMD vforked and has not yet exec'd: CMD waits for it and cannot stop),
		// which suspend would never continue. So Ctrl-Z does nothing to CMD, as the
		// kernel drops it for an orphaned group: CMD and all it starts inherit
		// SIGTSTP ignored (zkr too, which nothing would continue either).
		signal.Ignore(syscall.SIGTSTP)
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGCHLD, syscall.SIGCONT)
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		suspended := false
		for {
			select {
			case <-quit:
				return
			case sig := <-sigs:
				switch {
				case sig == syscall.SIGCHLD && c.groupStopped():
					suspended = c.suspend()
				case sig == syscall.SIGCONT && suspended:
					suspended = false
					c.resume()
				}
			}
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(quit)
		<-done
	}
}

// groupStopped tells whether a child of zkr in CMD's group has stopped, and takes
// the news: waitid without WEXITED never reaps CMD, which exec's Wait does.
func (c *child) groupStopped() bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PGID, c.pgid, &info, unix.WSTOPPED|unix.WNOHANG, nil)
	return err == nil && info.Signo != 0
}

// suspend stops zkr after CMD stopped, with the terminal back, as the terminal's
// Ctrl-Z would have stopped zkr's own job. Nothing would continue zkr if no
// job-control shell runs it (a script, a session of its own, as the kernel judges
// an orphaned group): then CMD is continued at once instead, and suspend reports
// false.
func (c *child) suspend() bool {
	had := c.tty.foreground() == c.pgid
	if had {
		c.tty.give(c.tty.zkr)
	}
	if !underJobControl() {
		if had {
			c.tty.give(c.pgid)
		}
		_ = syscall.Kill(-c.pgid, syscall.SIGCONT)
		return false
	}
	_ = syscall.Kill(0, syscall.SIGTSTP) // zkr's job, as Ctrl-Z would have
	return true
}

// resume continues CMD once zkr was continued: with the terminal if the shell gave
// it to zkr (fg), without it otherwise (bg).
func (c *child) resume() {
	if c.tty.inForeground() {
		c.tty.give(c.pgid)
	}
	_ = syscall.Kill(-c.pgid, syscall.SIGCONT)
}

// underJobControl tells whether zkr's parent runs it as a job: in the same session,
// in a process group of its own, as a job-control shell does.
func underJobControl() bool {
	ppid := os.Getppid()
	pg, err := syscall.Getpgid(ppid)
	if err != nil || pg == syscall.Getpgrp() {
		return false
	}
	theirs, err1 := unix.Getsid(ppid)
	ours, err2 := unix.Getsid(0)
	return err1 == nil && err2 == nil && theirs == ours
}
