package zkrtest

import (
	"bufio"
	"io"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// StartLines starts cmd, a process driven line by line: it returns a pipe to its
// stdin, and its stdout's lines on a channel that closes when stdout ends (the
// caller reads it to the end, or the process may block on a full pipe).
func StartLines(t testing.TB, cmd *exec.Cmd) (io.WriteCloser, chan string) {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			lines <- s.Text()
		}
	}()
	return stdin, lines
}
