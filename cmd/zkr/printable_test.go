//go:build linux

package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// hostileID is a participant id as another client with write access may choose
// it: OSC 52 (set the clipboard), a cursor move up and a line erase, a C1 CSI, a
// right-to-left override, DEL, a newline that would forge a line.
const hostileID = "evil\x1b]52;c;SGVsbG8=\x07\x1b[2A\x1b[K\u009b2J\u202e\x7f\nforged"

// hostileShown is how zkr shows it on one line.
const hostileShown = `evil\x1b]52;c;SGVsbG8=\x07\x1b[2A\x1b[K\u009b2J\u202e\x7f\x0aforged`

// obeyedByATerminal matches what a terminal would act on rather than show; a
// newline is allowed, since zkr's own lines end with one.
var obeyedByATerminal = regexp.MustCompile("[\x00-\x09\x0b-\x1f\x7f\u0080-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]")

func requireShownSafely(t *testing.T, out string) {
	t.Helper()
	require.NotRegexp(t, obeyedByATerminal, out)
	require.Contains(t, out, hostileShown)
}

// A holder's id reaches the terminal escaped in every view of it: inspect, its
// --watch lines, the waiting line of a lock; inspect --json keeps the id exact, in
// JSON escapes.
func TestHostileIDShownEscaped(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	env := []string{"ZK_SERVERS=" + h.servers}
	holder := h.start("lock", "/evil", "--id", hostileID)
	waitOutput(t, &holder.stdout, "/evil/_c_")

	code, stdout, stderr := runZkr(t, env, "inspect", "/evil")
	require.Equal(t, 0, code, stderr)
	requireShownSafely(t, stdout)

	code, stdout, stderr = runZkr(t, env, "inspect", "/evil", "--json")
	require.Equal(t, 0, code, stderr)
	require.NotRegexp(t, obeyedByATerminal, stdout)
	var q queue
	require.NoError(t, json.Unmarshal([]byte(stdout), &q))
	require.Len(t, q.Participants, 1)
	require.Equal(t, hostileID, q.Participants[0].ID)

	watch := h.start("inspect", "/evil", "--watch")
	waitOutput(t, &watch.stdout, "holding: lock ")
	watch.signal(syscall.SIGTERM)
	require.Equal(t, 0, watch.wait())
	requireShownSafely(t, watch.stdout.String())

	waiter := h.start("lock", "/evil", "--", "true")
	waitOutput(t, &waiter.stderr, "waiting for the lock on /evil: held by ")
	waiter.signal(syscall.SIGTERM)
	require.Equal(t, 128+int(syscall.SIGTERM), waiter.wait())
	requireShownSafely(t, waiter.stderr.String())
}

// zkr get copies data byte for byte to a file or a pipe; on a terminal it shows
// the data with control characters escaped, newlines and tabs kept.
func TestGetOnATerminal(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	env := []string{"ZK_SERVERS=" + h.servers}
	data := "line one\tok\n\x1b]52;c;SGVsbG8=\x07\x1b[2J\u009b"
	_, err := h.client.Create(testCtx(t), "/data", []byte(data))
	require.NoError(t, err)

	code, stdout, stderr := runZkr(t, env, "get", "/data")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, data, stdout)

	term := newTerminal(t)
	p := startZkrTo(t, term.slave, env, "get", "/data")
	require.NoError(t, term.slave.Close()) // zkr has its own
	require.Equal(t, 0, p.wait())
	term.waitScreen(t, `\x1b]52;c;SGVsbG8=\x07\x1b[2J\u009b`)
	shown := term.out.String()
	require.Contains(t, shown, "line one\tok\r\n") // the terminal turns \n into \r\n
	require.NotRegexp(t, obeyedByATerminal, strings.NewReplacer("\t", "", "\r", "").Replace(shown))
}
