//go:build linux

package main

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

// On a terminal, --watch draws its view again in place, from the top of a cleared
// screen, instead of printing a line per change: the holder and the waiter show up,
// then the lock free again.
func TestInspectWatchRedrawsOnATerminal(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	term := newTerminal(t)
	w := startZkrTo(t, term.slave, []string{"ZK_SERVERS=" + h.servers}, "inspect", "/w", "--watch")
	require.NoError(t, term.slave.Close()) // zkr has its own
	term.waitScreen(t, "/w: no such node")

	a := h.start("lock", "/w", "--id", "a")
	// A screen arrives in more than one write: wait for its rows, not its title.
	term.waitScreen(t, "/w: mutex, 1 participants")
	term.waitScreenMatch(t, `holder\s+lock\s+a\s`)
	b := h.start("lock", "/w", "--id", "b", "--", "true")
	term.waitScreen(t, "/w: mutex, 2 participants")
	term.waitScreenMatch(t, `waiting\s+lock\s+b\s`)
	a.signal(syscall.SIGTERM)
	require.Equal(t, 0, a.wait())
	require.Equal(t, 0, b.wait())
	term.waitScreen(t, "/w: no ") // participants, or no such node once the server deleted the empty container

	w.signal(syscall.SIGTERM)
	require.Equal(t, 0, w.wait())
	out := term.out.String()
	require.Contains(t, out, "zkr inspect --watch /w")
	require.Greater(t, strings.Count(out, clearScreen), 3, "a screen per change")
	require.NotRegexp(t, regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z /w`), out, "no piped lines")
	require.Empty(t, w.stdout.String())
}

// clearScreen is what --watch sends before each screen: home, and clear.
const clearScreen = "\033[H\033[2J"

// terminal is a pseudo-terminal whose slave side a zkr writes to; out gathers what
// it shows.
type terminal struct {
	master, slave *os.File
	out           zkrtest.SyncBuffer
}

func newTerminal(t *testing.T) *terminal {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	rc, err := master.SyscallConn()
	require.NoError(t, err)
	var n int
	var ioctlErr error
	require.NoError(t, rc.Control(func(fd uintptr) {
		if ioctlErr = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); ioctlErr == nil {
			n, ioctlErr = unix.IoctlGetInt(int(fd), unix.TIOCGPTN)
		}
	}))
	require.NoError(t, ioctlErr, "unlocking the pseudo-terminal and asking its number")
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	term := &terminal{master: master, slave: slave}
	copied := make(chan struct{})
	go func() {
		_, _ = io.Copy(&term.out, master) // until zkr and we have closed the slave side
		close(copied)
	}()
	// Registered before zkr starts, so run after its process is killed.
	t.Cleanup(func() {
		_ = slave.Close()
		_ = master.Close()
		<-copied
	})
	return term
}

// screen is what the terminal shows: everything since the last clear.
func (term *terminal) screen() string {
	out := term.out.String()
	return out[strings.LastIndex(out, clearScreen)+1:]
}

// waitScreenMatch waits until the screen matches the regular expression re.
func (term *terminal) waitScreenMatch(t *testing.T, re string) {
	t.Helper()
	r := regexp.MustCompile(re)
	eventually(t, fmt.Sprintf("the screen to match %q", re), func() bool {
		return r.MatchString(term.screen())
	})
}

// waitScreen waits until the screen shows text.
func (term *terminal) waitScreen(t *testing.T, text string) {
	t.Helper()
	eventually(t, fmt.Sprintf("the screen to show %q", text), func() bool {
		return strings.Contains(term.screen(), text)
	})
}
