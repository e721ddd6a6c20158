package main

import (
	"regexp"
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
