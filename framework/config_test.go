package framework

import (
	"log/slog"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/zktest"
)

func TestParseConfig(t *testing.T) {
	cfg, err := parseConfig([]byte("server.1=zk-0.zk-hs.default.svc.cluster.local:2888:3888:participant;0.0.0.0:2181\n" +
		"server.2=10.0.0.2:2888:3888:observer;10.0.0.2:2182\n" +
		"server.3=[::1]:2888:3888;2183\n" +
		"server.4=zk-3.example:2888:3888:participant;zk-3.example:2184\n" +
		"version=10000000a\n"))
	require.NoError(t, err)
	require.Equal(t, int64(0x10000000a), cfg.Version)
	require.Equal(t, []Member{
		{ID: 1, Host: "zk-0.zk-hs.default.svc.cluster.local", PeerPort: 2888, ElectionPort: 3888, Role: "participant",
			Client: "zk-0.zk-hs.default.svc.cluster.local:2181"},
		{ID: 2, Host: "10.0.0.2", PeerPort: 2888, ElectionPort: 3888, Role: "observer", Client: "10.0.0.2:2182"},
		{ID: 3, Host: "::1", PeerPort: 2888, ElectionPort: 3888, Role: "participant", Client: "[::1]:2183"},
		{ID: 4, Host: "zk-3.example", PeerPort: 2888, ElectionPort: 3888, Role: "participant", Client: "zk-3.example:2184"},
	}, cfg.Members, "hostnames stay hostnames; a wildcard client address is the member's host")

	static, err := parseConfig([]byte("server.1=127.0.0.1:2888:3888:participant\nversion=0\n"))
	require.NoError(t, err)
	require.Len(t, static.Members, 1)
	require.Nil(t, static.ClientAddrs(), "a static configuration names no client address")

	for _, bad := range []string{"server.x=h:1:2", "server.1=h:1", "server.1=h:1:2:boss", "server.1=:1:2", "server.1=h:0:2",
		"server.1=h:1:2;", "server.1=[::1:1:2", "version=zz"} {
		_, err := parseConfig([]byte(bad))
		require.Error(t, err, bad)
	}
}

func TestFollowKeepsTheConfigurationsHostnames(t *testing.T) {
	c, err := New([]string{"127.0.0.1:1"}, WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	defer c.Close()
	c.follow([]byte("server.1=127.0.0.1:2888:3888:participant\nversion=1\n"))
	require.Equal(t, []string{"127.0.0.1:1"}, c.Servers(), "a static configuration is ignored")
	c.follow([]byte("server.1=0.0.0.0:2888:3888:participant;0.0.0.0:2181\n" +
		"server.2=zk2.test:2888:3888:participant;0.0.0.0:2182\nversion=2\n"))
	require.Equal(t, []string{"127.0.0.1:1"}, c.Servers(), "a member without a usable client address: ignored")
	c.follow([]byte("server.1=zk1.test:2888:3888:participant;zk1.test:2181\n" +
		"server.2=zk2.test:2888:3888:participant;0.0.0.0:2182\nversion=2\n"))
	require.ElementsMatch(t, []string{"zk1.test:2181", "zk2.test:2182"}, c.Servers())
}

func TestReconfigRefusesMalformedSpecs(t *testing.T) {
	c, err := New([]string{"127.0.0.1:1"})
	require.NoError(t, err)
	defer c.Close()
	for _, tc := range []struct{ joining, leaving []string }{
		{nil, nil},
		{[]string{"127.0.0.1:2888:3888"}, nil},
		{[]string{"server.4=127.0.0.1:2888"}, nil},
		{nil, []string{"server.3"}},
		{nil, []string{"-1"}},
	} {
		_, err := c.Reconfig(testCtx(t), tc.joining, tc.leaving, -1)
		require.ErrorIs(t, err, ErrInvalidReconfig, "%q %q", tc.joining, tc.leaving)
	}
}

func TestReconfigErrors(t *testing.T) {
	e := zktest.NewEnsemble(t, 1, zktest.WithDynamicConfig())
	c := newClient(t, []string{e.Addr(0)})
	ctx := testCtx(t)
	cfg, err := c.Config(ctx)
	require.NoError(t, err)

	_, err = c.Reconfig(ctx, []string{"server.9=127.0.0.1:1:2:participant;127.0.0.1:3"}, nil, cfg.Version+1)
	require.ErrorIs(t, err, zk.ErrBadVersion)
	require.ErrorContains(t, err, "read Config again")

	// A second voter that is not running: a quorum of the new configuration (both)
	// is not connected to the leader.
	_, err = c.Reconfig(ctx, []string{"server.9=127.0.0.1:1:2:participant;127.0.0.1:3"}, nil, -1)
	require.ErrorIs(t, err, ErrReconfigNoQuorum)
	after, err := c.Config(ctx)
	require.NoError(t, err)
	require.Equal(t, cfg, after, "nothing changed")

	// A static standalone server does not allow it.
	srv := sharedServer(t)
	s := newClient(t, []string{srv.Addr()})
	_, err = s.Reconfig(ctx, nil, []string{"1"}, -1)
	require.ErrorIs(t, err, zk.ErrReconfigDisabled)
	require.ErrorContains(t, err, "reconfigEnabled=true")
}
