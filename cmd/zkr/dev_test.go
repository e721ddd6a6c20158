package main

import (
	"fmt"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// zkr dev prints where its ZooKeeper serves, serves, and stops on SIGINT. It runs
// the newest ZooKeeper installed (3.9.6 once make deps has run), says which and the
// session timeouts it grants, and grants a session of 30 s (issue 44: it ran with
// tickTime 200 ms, which cut every session to 4 s, and said neither).
func TestDev(t *testing.T) {
	t.Parallel()
	dev := startZkr(t, nil, "dev")
	waitOutput(t, &dev.stdout, "\nexport ZK_SERVERS=")
	m := regexp.MustCompile(`^ZK_SERVERS=(127\.0\.0\.1:\d+)\nexport ZK_SERVERS=(127\.0\.0\.1:\d+)\n$`).FindStringSubmatch(dev.stdout.String())
	require.NotNil(t, m, dev.stdout.String())
	require.Equal(t, m[1], m[2])

	waitOutput(t, &dev.stderr, "session timeouts of")
	said := regexp.MustCompile(`ZooKeeper (\S+) serves at ` + regexp.QuoteMeta(m[1]) + ` until Ctrl-C or SIGTERM; it grants session timeouts of (\S+) to (\S+)\n`).
		FindStringSubmatch(dev.stderr.String())
	require.NotNil(t, said, dev.stderr.String())
	srvr, err := zktest.FourLetter(testCtx(t), m[1], "srvr")
	require.NoError(t, err)
	require.Contains(t, srvr, "Zookeeper version: "+said[1]+"-", "the version said is the one serving")
	if os.Getenv("ZKTEST_ZOOKEEPER") == "" {
		require.Equal(t, zktest.InstalledVersions()[0], said[1], "the newest installed")
	}
	conf, err := zktest.FourLetter(testCtx(t), m[1], "conf")
	require.NoError(t, err)
	for _, bound := range []struct{ key, said string }{{"minSessionTimeout", said[2]}, {"maxSessionTimeout", said[3]}} {
		d, err := time.ParseDuration(bound.said)
		require.NoError(t, err)
		require.Contains(t, conf, fmt.Sprintf("%s=%d\n", bound.key, d.Milliseconds()), "the range said is the server's")
	}
	c := zkrtest.Client(t, []string{m[1]}, framework.WithSessionTimeout(30*time.Second))
	require.Equal(t, 30*time.Second, c.NegotiatedSessionTimeout(), "a session of 30 s is granted as asked")
	require.NoError(t, c.Close())

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

// The versions the README recommends: 3.9.4 or later.
func TestRecommended(t *testing.T) {
	for version, want := range map[string]bool{
		"3.9.6": true, "3.9.4": true, "3.10.0": true, "4.0.1": true,
		"3.9.3": false, "3.8.0": false, "3.8.4": false, "3.5.10": false, "": false, "x": false,
	} {
		require.Equal(t, want, recommended(version), version)
	}
}
