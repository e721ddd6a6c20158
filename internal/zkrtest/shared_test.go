package zkrtest

import (
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zkrecipes/zkrecipes/framework"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(SharedServer(m)) }

func TestSharedServerIsEmptyForEachTest(t *testing.T) {
	var addrs []string
	for i := range 2 {
		t.Run("", func(t *testing.T) {
			srv := Server(t)
			addrs = append(addrs, srv.Addr())
			c := Client(t, []string{srv.Addr()})
			require.Equal(t, []string{"zookeeper"}, Children(t, c, "/"), "run %d", i)
			_, err := c.Create(Context(t), "/left/behind", nil, framework.CreatingParents())
			require.NoError(t, err)
			_, err = c.Create(Context(t), "/eph", nil, framework.Ephemeral())
			require.NoError(t, err)
		})
	}
	require.Equal(t, addrs[0], addrs[1], "one server")
	srv := Server(t)
	c := Client(t, []string{srv.Addr()}, framework.WithAuth("digest", []byte("a:b")), framework.WithACL(framework.FixedACL(zk.AuthACL(zk.PermAll)...)))
	_, err := c.Create(Context(t), "/private", nil)
	require.NoError(t, err)
	require.Error(t, wipe(srv.Addr()), "a node it cannot delete")
	require.NoError(t, c.Delete(Context(t), "/private", -1))
}
