package wire

import (
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
)

// go-zookeeper's request counter is read through reflection: this go-zookeeper has
// it, and a struct without it gives nil (the hold then ends at any SetWatches).
func TestGoZookeepersFieldsAreFound(t *testing.T) {
	require.NotNil(t, goZookeeperXids(&zk.Conn{}), "go-zookeeper's Conn.xid: renamed or retyped in this version?")
	require.NotNil(t, goZookeeperLastZxid(&zk.Conn{}), "go-zookeeper's Conn.lastZxid: renamed or retyped in this version?")
	require.Nil(t, uint32Field(&struct{ xid int64 }{}, "xid"), "a field of another type")
	require.Nil(t, uint32Field(&struct{ other uint32 }{}, "xid"), "no such field")
	require.Nil(t, uint32Field(struct{ xid uint32 }{}, "xid"), "not a pointer")

	var x xidsAtConnect // no counter: every SetWatches is this connection's
	x.connected()
	require.True(t, x.since(1))
}
