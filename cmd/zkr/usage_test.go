package main

import (
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Bad input gives one line naming the problem and the usage exit code; a server
// that cannot be reached gives the connection exit code.
func TestBadInput(t *testing.T) {
	t.Parallel()
	// A port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := l.Addr().String()
	require.NoError(t, l.Close())

	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{nil, exitUsage, "zkr: missing command"},
		{[]string{"frobnicate"}, exitUsage, `zkr: unknown command "frobnicate"`},
		{[]string{"--bogus", "lock"}, exitUsage, "zkr: flag provided but not defined: -bogus"},
		{[]string{"lock"}, exitUsage, "zkr lock: missing PATH"},
		{[]string{"lock", "relative/path", "--", "true"}, exitUsage, `zkr lock: invalid PATH "relative/path": does not start with "/"`},
		{[]string{"lock", "/trailing/", "--", "true"}, exitUsage, `zkr lock: invalid PATH "/trailing/": ends with "/"`},
		{[]string{"lock", "/"}, exitUsage, `zkr lock: invalid PATH "/"`},
		{[]string{"lock", "/a", "/b"}, exitUsage, `zkr lock: unexpected argument "/b" after PATH`},
		{[]string{"lock", "/a", "--"}, exitUsage, "zkr lock: missing CMD after --"},
		{[]string{"lock", "/a", "--bogus"}, exitUsage, "zkr lock: flag provided but not defined: -bogus"},
		{[]string{"lock", "/a", "--timeout", "soon"}, exitUsage, `zkr lock: invalid value "soon" for flag -timeout`},
		{[]string{"semaphore", "/a", "--", "true"}, exitUsage, "zkr semaphore: --leases must be at least 1, not 0"},
		{[]string{"semaphore", "/a", "--leases", "0", "--", "true"}, exitUsage, "zkr semaphore: --leases must be at least 1, not 0"},
		{[]string{"semaphore", "/a", "--leases", "-2"}, exitUsage, "zkr semaphore: --leases must be at least 1, not -2"},
		{[]string{"elect", "/a"}, exitUsage, "zkr elect: missing CMD after --"},
		{[]string{"inspect", "/a", "--", "true"}, exitUsage, "zkr inspect: inspect runs no command"},
		{[]string{"inspect", "/a", "--for", "1s"}, exitUsage, "zkr inspect: --for goes with --watch"},
		{[]string{"inspect", "/a", "--watch", "--for", "-1s"}, exitUsage, "zkr inspect: --for cannot be negative"},
		{[]string{"inspect", "/a", "--watch", "--tree"}, exitUsage, "zkr inspect: --tree goes with neither --as nor --watch"},
		{[]string{"inspect", "/a", "--watch", "--as", "queue"}, exitUsage, `zkr inspect: --as wants one of group, value, count, counter, not "queue"`},
		{[]string{"inspect", "a", "--watch"}, exitUsage, `zkr inspect: invalid PATH "a"`},
		{[]string{"dev", "extra"}, exitUsage, "zkr dev: dev takes no arguments"},
		{[]string{"--auth", "nocolon", "lock", "/a"}, exitUsage, "zkr lock: --auth wants scheme:credentials"},
		{[]string{"--servers", "", "lock", "/a"}, exitUsage, "zkr lock: no ZooKeeper servers"},
		{[]string{"--namespace", "/ns", "lock", "/a"}, exitUsage, "zkr lock: invalid namespace"},
		{[]string{"--session-timeout", "0s", "lock", "/a"}, exitUsage, "zkr lock: --session-timeout and --connect-timeout must be positive"},
		{[]string{"--servers", closed, "--connect-timeout", "1s", "lock", "/a", "--", "true"}, exitZooKeeper,
			"zkr lock: cannot connect to ZooKeeper at " + closed + " within 1s (last attempt: dial tcp " + closed},
		{[]string{"--servers", closed, "--connect-timeout", "1s", "inspect", "/a"}, exitZooKeeper,
			"zkr inspect: cannot connect to ZooKeeper at " + closed + " within 1s (last attempt: dial tcp " + closed},
		{[]string{"--servers", closed, "--connect-timeout", "1s", "inspect", "/a", "--watch"}, exitZooKeeper,
			"zkr inspect: cannot connect to ZooKeeper at " + closed + " within 1s (last attempt: dial tcp " + closed},
		{[]string{"--servers", closed, "--connect-timeout", "1s", "inspect", "/a", "--watch", "--json"}, exitZooKeeper,
			"zkr inspect: cannot connect to ZooKeeper at " + closed + " within 1s (last attempt: dial tcp " + closed},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runZkr(t, []string{"ZK_SERVERS=127.0.0.1:1"}, tc.args...)
			require.Equal(t, tc.code, code, stderr)
			require.Empty(t, stdout)
			require.Equal(t, 1, strings.Count(stderr, "\n"), "not one line: %q", stderr)
			require.True(t, strings.HasPrefix(stderr, tc.msg), "%q does not start with %q", stderr, tc.msg)
		})
	}
}

// Every command explains itself, with an example and its exit codes.
func TestHelp(t *testing.T) {
	t.Parallel()
	for _, a := range [][]string{{"--help"}, {"help"}, {"help", "lock"}, {"lock", "--help"}, {"rlock", "-h"},
		{"wlock", "--help"}, {"semaphore", "--help"}, {"elect", "--help"}, {"inspect", "--help"}, {"ensemble", "--help"}, {"dev", "--help"}} {
		t.Run(strings.Join(a, " "), func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runZkr(t, nil, a...)
			require.Equal(t, 0, code, stderr)
			require.Contains(t, stdout, "Usage: zkr")
			require.Contains(t, stdout, "Example:\n  ")
			require.Contains(t, stdout, "Exit codes:\n")
			require.Contains(t, stdout, "--servers")
		})
	}
}
