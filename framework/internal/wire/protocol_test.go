package wire

import (
	"io"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework/internal/wire/wiretest"
)

// The xid ranges: the framework's own are negative, below every xid the server
// gives its own packets (-1 notifications, -2 pings; the Java client's -4 for
// credentials, -8 for SetWatches) and never go-zookeeper's (0 and up), through the
// wrap of their count.
func TestOurXidsMeetNoOneElses(t *testing.T) {
	for _, n := range []uint32{0, 1, 2, 1<<29 - 1, 1 << 29, 1<<32 - 1} {
		xid := ourXid(n)
		require.True(t, isOurXid(xid), "ourXid(%d) = %d", n, xid)
		require.Less(t, xid, int32(-8))
	}
	for _, xid := range []int32{0, 1, 1<<31 - 1, -1, -2, -4, -8, -(1 << 16) + 1} {
		require.False(t, isOurXid(xid), "%d", xid)
	}
}

// A notification reaches the persistent watches before go-zookeeper has it, so
// before any later packet is read: before the reply to the request that made the
// change.
func TestANotificationIsHeardBeforeTheNextPacketIsRead(t *testing.T) {
	watches := NewWatches(testHandle(t, nil).cfg.Log)
	h := testHandle(t, watches)
	var heard []Event
	_, err := watches.Add(&Watch{Path: "/p", Mode: PersistentRecursive, Deliver: func(ev Event) { heard = append(heard, ev) }, End: func() {}})
	require.ErrorIs(t, err, ErrConnectionLost)
	conn, server := pipeHandleConn(t, h)
	go func() { _, _ = io.Copy(io.Discard, server) }()
	created := packet(wiretest.Notification(8, int32(zk.EventNodeCreated), "/p/x"))
	serve(t, server, false, session, created, packet(wiretest.Header(3, 8, 0)))
	_, err = readAs(conn)
	require.NoError(t, err)
	p, err := readAs(conn)
	require.NoError(t, err)
	require.Equal(t, created, p)
	require.Equal(t, Event{Type: zk.EventNodeCreated, Path: "/p/x", Zxid: 8}, heard[len(heard)-1],
		"heard as go-zookeeper gets it")
}
