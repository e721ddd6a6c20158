package main

import (
	"net"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// zkr dev prints where its ZooKeeper serves, serves, and stops on SIGINT.
func TestDev(t *testing.T) {
	t.Parallel()
	dev := startZkr(t, nil, "dev")
	waitOutput(t, &dev.stdout, "\nexport ZK_SERVERS=")
	m := regexp.MustCompile(`^ZK_SERVERS=(127\.0\.0\.1:\d+)\nexport ZK_SERVERS=(127\.0\.0\.1:\d+)\n$`).FindStringSubmatch(dev.stdout.String())
	require.NotNil(t, m, dev.stdout.String())
	require.Equal(t, m[1], m[2])

	code, _, stderr := runZkr(t, []string{"ZK_SERVERS=" + m[1]}, "lock", "/dev-test", "--", "true")
	require.Equal(t, 0, code, stderr)

	dev.signal(syscall.SIGINT)
	require.Equal(t, 0, dev.wait())
}

// zkr dev --port serves where it is told, and says so plainly when it cannot.
func TestDevPort(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())

	dev := startZkr(t, nil, "dev", "--port", strconv.Itoa(port))
	waitOutput(t, &dev.stdout, "\nexport ZK_SERVERS=")
	require.Contains(t, dev.stdout.String(), "ZK_SERVERS=127.0.0.1:"+strconv.Itoa(port)+"\n")

	code, _, stderr := runZkr(t, nil, "dev", "--port", strconv.Itoa(port))
	require.Equal(t, 69, code)
	require.Contains(t, stderr, "in use")
	require.Equal(t, 1, strings.Count(strings.TrimSpace(stderr), "\n")+1, "one line: %q", stderr)

	dev.signal(syscall.SIGINT)
	require.Equal(t, 0, dev.wait())
}
