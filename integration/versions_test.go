package integration

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// TestVersions names what this run tests against, as the server and the Curator peer
// report it themselves, and checks that it is what ZKTEST_ZOOKEEPER and ZKTEST_CURATOR
// chose (make test runs it with -v, so that its log names them).
func TestVersions(t *testing.T) {
	srv := zktest.NewServer(t)
	if want := os.Getenv("ZKTEST_ZOOKEEPER"); want != "" && !strings.Contains(want, "/") {
		require.True(t, srv.Version() == want || strings.HasPrefix(srv.Version(), want+"."),
			"ZKTEST_ZOOKEEPER=%s, and the server reports %s", want, srv.Version())
	}
	curator, client := zkrtest.CuratorPeerVersion(t)
	t.Logf("ZooKeeper %s (as its srvr says; installed: %s), Apache Curator %s with ZooKeeper's client %s (as the peer says)",
		srv.Version(), strings.Join(zktest.InstalledVersions(), ", "), curator, client)
}
