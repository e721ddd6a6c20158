package wire

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework/internal/wire/wiretest"
)

// A server that breaks the protocol: what it sends is read as go-zookeeper reads
// it, and each misdeed ends in a dropped connection with an error that says what
// was wrong, or in the packet ignored where the protocol allows it.

// serve starts conn's server side writing packets, in order, then closing if end.
func serve(t *testing.T, server net.Conn, end bool, packets ...[]byte) {
	t.Helper()
	done := make(chan struct{})
	t.Cleanup(func() { _ = server.Close(); <-done })
	go func() {
		defer close(done)
		for _, p := range packets {
			if _, err := server.Write(p); err != nil {
				return
			}
		}
		if end {
			_ = server.Close()
		}
	}()
}

// packet frames body with its length; raw is a length as the server wrote it.
func packet(body []byte) []byte { return raw(int32(len(body)), body) }

func raw(length int32, body []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(length)), body...)
}

// readAs reads one packet from conn as go-zookeeper does: its length, then the rest.
func readAs(conn *Conn) ([]byte, error) {
	size := make([]byte, 4)
	if _, err := io.ReadFull(conn, size); err != nil {
		return nil, err
	}
	p := append(size, make([]byte, binary.BigEndian.Uint32(size))...)
	_, err := io.ReadFull(conn, p[4:])
	return p, err
}

var (
	session = packet(wiretest.ConnectResponse(4000, 7))
	ping    = packet(wiretest.Header(-2, 0, 0))
)

// failedConn is a connection whose handle records what Config.Failed hears.
func failedConn(t *testing.T) (*Conn, net.Conn, *[]error) {
	conn, server := pipeConn(t)
	var failed []error
	conn.h.cfg.Failed = func(_ string, _ int, err error) { failed = append(failed, err) }
	return conn, server, &failed
}

// go-zookeeper makes its ping ticker from the session timeout: time.NewTicker panics
// on one of 0 or less, which would end the client's whole process. An expired
// session's response carries 0 and is go-zookeeper's to handle.
func TestASessionTimeoutOfZeroOrLessIsRefused(t *testing.T) {
	for _, ms := range []int32{0, -1, -1 << 31} {
		t.Run(fmt.Sprint(ms), func(t *testing.T) {
			conn, server, failed := failedConn(t)
			serve(t, server, false, packet(wiretest.ConnectResponse(ms, 7)))
			_, err := readAs(conn)
			require.ErrorIs(t, err, ErrProtocol)
			require.ErrorContains(t, err, fmt.Sprintf("a session timeout of %d ms", ms))
			require.Len(t, *failed, 1, "a failed attempt to connect")
		})
	}
	conn, server, failed := failedConn(t)
	expired := packet(wiretest.ConnectResponse(0, 0))
	serve(t, server, false, expired)
	p, err := readAs(conn)
	require.NoError(t, err)
	require.Equal(t, expired, p)
	require.Empty(t, *failed)
}

// A notification too large to read cannot be skipped: a waiter would never be
// woken, and the record of one-shot watches would go stale. The connection ends,
// and the next sets every watch again.
func TestANotificationTooLargeEndsTheConnection(t *testing.T) {
	conn, server := pipeConn(t)
	huge := raw(2<<20, wiretest.Notification(5, int32(zk.EventNodeDataChanged), "/p"))
	serve(t, server, true, session, huge, ping)
	_, err := readAs(conn)
	require.NoError(t, err)
	_, err = readAs(conn)
	require.ErrorIs(t, err, ErrPacketTooLarge)
	require.ErrorContains(t, err, "a notification too large")
}

// Lengths are read signed, as jute writes them: a negative one, and one shorter
// than a reply's header, end the connection before anything is allocated or read
// for them.
func TestBadLengthsEndTheConnection(t *testing.T) {
	for _, n := range []int32{-1, -16, -1 << 31, 0, 15} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			conn, server := pipeConn(t)
			serve(t, server, true, session, raw(n, wiretest.Header(1, 1, 0)))
			_, err := readAs(conn)
			require.NoError(t, err)
			_, err = readAs(conn)
			require.ErrorIs(t, err, ErrProtocol)
			require.ErrorContains(t, err, fmt.Sprintf("a packet of %d bytes", n))
		})
	}
}

// A connect response that is not one: too short for its fields, or a length that
// is no connect response's, says what the server sent.
func TestABadConnectResponseIsRefused(t *testing.T) {
	for name, tc := range map[string]struct {
		sent []byte
		want string
	}{
		"short":      {packet(wiretest.Jute(nil).Int(0).Int(4000)), "a connect response of 8 bytes"},
		"lying path": {packet(wiretest.Jute(nil).Int(0).Int(4000).Long(7).Int(100)), "a connect response of 20 bytes"},
		"negative":   {raw(-20, nil), `it sent "\xff\xff\xff\xec"`},
	} {
		t.Run(name, func(t *testing.T) {
			conn, server, failed := failedConn(t)
			serve(t, server, true, tc.sent)
			_, err := readAs(conn)
			require.ErrorIs(t, err, ErrProtocol)
			require.ErrorContains(t, err, tc.want)
			require.Len(t, *failed, 1)
		})
	}
}

// A connection of a handle the client abandoned (a session given up, whose handle
// closes in the background) can still bring a connect response and notifications:
// they must not take the persistent watches over, nor reach them.
func TestAnAbandonedHandlesConnectionLeavesTheWatchesAlone(t *testing.T) {
	watches := NewWatches(testHandle(t, nil).cfg.Log)
	old := testHandle(t, watches)
	current := testHandle(t, watches)
	var heard []Event
	w := &Watch{Path: "/p", Mode: PersistentRecursive, Deliver: func(ev Event) { heard = append(heard, ev) }, End: func() {}}
	_, err := watches.Add(w)
	require.ErrorIs(t, err, ErrConnectionLost, "no connection yet; the watch is registered")

	oldConn, oldServer := pipeHandleConn(t, old)
	go func() { _, _ = io.Copy(io.Discard, oldServer) }()
	serve(t, oldServer, false, session, packet(wiretest.Notification(9, int32(zk.EventNodeCreated), "/p/x")), ping)
	for range 3 {
		_, err := readAs(oldConn)
		require.NoError(t, err)
	}
	require.Empty(t, heard, "the abandoned handle's Reset and notification")
	_, err = watches.Add(w)
	require.ErrorIs(t, err, ErrConnectionLost, "the watches are not set on the abandoned handle")

	conn, server := pipeHandleConn(t, current)
	go func() { _, _ = io.Copy(io.Discard, server) }()
	serve(t, server, false, session)
	_, err = readAs(conn)
	require.NoError(t, err)
	require.Equal(t, []Event{{Type: zk.EventNotWatching, Path: "/p", Reset: true}}, heard)
}

// pipeHandleConn is a connection of h over a pipe whose server end is returned.
func pipeHandleConn(t *testing.T, h *Handle) (*Conn, net.Conn) {
	server, client := net.Pipe()
	conn := h.NewConn(client, "pipe", "pipe")
	t.Cleanup(func() { _ = server.Close(); _ = conn.Close() })
	return conn, server
}

// Replies in the framework's own xid range reach only the request that carried
// that xid, in whatever order they come; one for no request, or a second for the
// same request, is ignored; none of them reaches go-zookeeper, whose next packet
// comes whole.
func TestOurRepliesAreRoutedByXidAndTheRestIgnored(t *testing.T) {
	conn, server := pipeConn(t)
	go func() { _, _ = io.Copy(io.Discard, server) }()
	serve(t, server, false, session)
	_, err := readAs(conn)
	require.NoError(t, err)
	a := conn.request(frame(0, opcodeRemoveWatches, jute(nil).str("/a").int(removeAny)))
	b := conn.request(frame(0, opcodeRemoveWatches, jute(nil).str("/b").int(removeAny)))
	serve(t, server, false,
		packet(wiretest.Header(ourXid(2), 20, codeNoWatcher)), // b's, first
		packet(wiretest.Header(ourXid(9), 90, 0)),             // no one's
		packet(wiretest.Header(ourXid(1), 10, 0)),             // a's
		packet(wiretest.Header(ourXid(1), 11, 0)),             // a's again
		ping)
	p, err := readAs(conn)
	require.NoError(t, err)
	require.Equal(t, ping, p, "go-zookeeper's next packet")
	require.Equal(t, Reply{Zxid: 10, Code: 0}, <-a)
	require.Equal(t, Reply{Zxid: 20, Code: codeNoWatcher}, <-b)
	select {
	case r := <-a:
		t.Fatalf("a second reply: %+v", r)
	default:
	}
}

// A notification for a path nothing watches is go-zookeeper's to ignore: the
// persistent watches hear nothing of it, and the connection goes on.
func TestANotificationForAPathNeverWatchedIsPassedOn(t *testing.T) {
	watches := NewWatches(testHandle(t, nil).cfg.Log)
	h := testHandle(t, watches)
	var heard []Event
	_, err := watches.Add(&Watch{Path: "/p", Mode: PersistentRecursive, Deliver: func(ev Event) { heard = append(heard, ev) }, End: func() {}})
	require.ErrorIs(t, err, ErrConnectionLost)
	conn, server := pipeHandleConn(t, h)
	go func() { _, _ = io.Copy(io.Discard, server) }()
	stranger := packet(wiretest.Notification(4, int32(zk.EventNodeDeleted), "/q"))
	serve(t, server, false, session, stranger, ping)
	for _, want := range [][]byte{session, stranger, ping} {
		p, err := readAs(conn)
		require.NoError(t, err)
		require.Equal(t, want, p)
	}
	require.Equal(t, []Event{{Type: zk.EventNotWatching, Path: "/p", Reset: true}}, heard, "only the Reset")
}

// A stream cut in the middle of a packet ends the connection, whatever the packet:
// a reply of go-zookeeper's (go-zookeeper sees the end), a notification, or a reply
// of ours, whose request then ends without one.
func TestAStreamCutMidPacketEndsTheConnection(t *testing.T) {
	for name, cut := range map[string][]byte{
		"go-zookeeper's reply": packet(append(wiretest.Header(1, 5, 0), make([]byte, 40)...))[:30],
		"a notification":       packet(wiretest.Notification(5, int32(zk.EventNodeCreated), "/p/child"))[:28],
		"a reply of ours":      packet(append(wiretest.Header(ourXid(1), 5, 0), make([]byte, 40)...))[:30],
		"a header":             packet(wiretest.Header(1, 5, 0))[:10],
	} {
		t.Run(name, func(t *testing.T) {
			conn, server := pipeConn(t)
			go func() { _, _ = io.Copy(io.Discard, server) }()
			serve(t, server, false, session)
			_, err := readAs(conn)
			require.NoError(t, err)
			ch := conn.request(frame(0, opcodeRemoveWatches, jute(nil).str("/p").int(removeAny)))
			serve(t, server, true, cut)
			_, err = readAs(conn)
			require.Error(t, err)
			_, ok := <-ch
			require.False(t, ok, "the request ends without a reply")
		})
	}
}
