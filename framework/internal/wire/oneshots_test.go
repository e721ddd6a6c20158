package wire

import (
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
)

// The record of go-zookeeper's one-shot watches drops them as go-zookeeper does: a
// data change its data and exist watches, a child change its child watch, a
// deletion all three.
func TestOneShotsDropWhatEachNotificationFires(t *testing.T) {
	set := func(o *oneShots, xid, opcode int32) {
		o.wrote(xid, opcode, "/p")
		o.replied(xid, 0)
	}
	var o oneShots
	set(&o, 1, opcodeGetChildren2)
	set(&o, 2, opcodeGetData)
	o.fired(zk.EventNodeDataChanged, "/p")
	require.True(t, o.on("/p"), "the child watch after a data change")
	o.fired(zk.EventNodeChildrenChanged, "/p")
	require.False(t, o.on("/p"))

	set(&o, 3, opcodeGetChildren)
	set(&o, 4, opcodeExists)
	o.fired(zk.EventNodeDeleted, "/p")
	require.False(t, o.on("/p"), "a deletion fires every watch of the path")
}
