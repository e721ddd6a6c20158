package wire

import (
	"time"

	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework/internal/wire/wiretest"
)

// credentialed is a connection of a handle that must have one credential accepted
// on each connection, whose persistent watches follow /p; and the server's end.
func credentialed(t *testing.T) (*Conn, *wiretest.Conn) {
	watches := NewWatches(testHandle(t, nil).cfg.Log)
	h := testHandle(t, watches)
	h.cfg.Credentials = 1
	_, err := watches.Add(&Watch{Path: "/p", Mode: PersistentRecursive, Deliver: func(Event) {}, End: func() {}})
	require.ErrorIs(t, err, ErrConnectionLost, "registered, to be set on the next connection")
	conn, server := pipeHandleConn(t, h)
	return conn, &wiretest.Conn{Conn: server}
}

// sendAsync writes p from the server's end while the client reads it.
func sendAsync(server *wiretest.Conn, p []byte) { go func() { _ = server.Send(p) }() }

// setAuth is go-zookeeper's credentials request, xid 1.
var setAuth = frame(1, opcodeSetAuth, jute(nil).int(0).str("digest").str("user:secret"))

// A server that enforces authentication refuses anything before the credentials
// (-124) and drops the connection: the persistent watches are set again only once
// the server has accepted the credentials go-zookeeper re-sends.
func TestNothingOfOursIsWrittenBeforeTheCredentialsAreAccepted(t *testing.T) {
	conn, server := credentialed(t)
	got := make(chan wiretest.Request, 8)
	go func() {
		for {
			r, err := server.ReadRequest()
			if err != nil {
				return
			}
			got <- r
		}
	}()
	sendAsync(server, wiretest.ConnectResponse(4000, 7))
	_, err := readAs(conn)
	require.NoError(t, err)
	conn.flushing.Wait()         // whatever the connection had begun to write of its own
	_, err = conn.Write(setAuth) // go-zookeeper, at once
	require.NoError(t, err)
	require.Equal(t, int32(opcodeSetAuth), (<-got).Opcode, "the first request after the connect response")

	sendAsync(server, wiretest.Header(1, 0, 0))
	_, err = readAs(conn)
	require.NoError(t, err)
	require.Equal(t, int32(opcodeSetWatches2), (<-got).Opcode, "once the credentials were accepted")
	require.NoError(t, conn.h.Refused())
}

// A refused credential, and a server that wants some, are recorded with what the
// server refused, for the client to say; nothing of ours is written meanwhile.
func TestRefusedCredentialsAreNamed(t *testing.T) {
	conn, server := credentialed(t)
	sendAsync(server, wiretest.ConnectResponse(4000, 7))
	_, err := readAs(conn)
	require.NoError(t, err)
	go func() { _, _ = conn.Write(setAuth) }()
	r, err := server.ReadRequest()
	require.NoError(t, err)
	require.Equal(t, int32(opcodeSetAuth), r.Opcode)
	sendAsync(server, wiretest.Header(1, 0, codeAuthFailed))
	_, err = readAs(conn)
	require.NoError(t, err, "go-zookeeper reads the refusal itself")
	require.ErrorIs(t, conn.h.Refused(), zk.ErrAuthFailed)
	require.ErrorContains(t, conn.h.Refused(), `refused the client's "digest" credentials (ZooKeeper's -115)`)

	sendAsync(server, wiretest.Header(2, 0, codeSessionRequiresAuth))
	_, err = readAs(conn)
	require.NoError(t, err)
	require.ErrorContains(t, conn.h.Refused(), "the session requires authentication (ZooKeeper's -124)")

	require.NoError(t, server.Close())
	_, err = readAs(conn)
	require.Error(t, err)
	conn.wmu.Lock()
	defer conn.wmu.Unlock()
	require.False(t, conn.open, "the gate, after a refusal")
}

// A server that stops reading cannot stall the framework's writes: each has a
// deadline of its own (Config.Handshake), after which the connection is dropped, and
// the requests waiting on it end. AddWatch, a watch's Close and the delivery of
// events then go on, on the next connection.
func TestAServerThatStopsReadingEndsTheConnection(t *testing.T) {
	watches := NewWatches(testHandle(t, nil).cfg.Log)
	h := testHandle(t, watches)
	h.cfg.Handshake = 50 * time.Millisecond
	conn, server := pipeHandleConn(t, h)
	sendAsync(&wiretest.Conn{Conn: server}, wiretest.ConnectResponse(4000, 7))
	_, err := readAs(conn)
	require.NoError(t, err)
	reading := make(chan error, 1)
	go func() { _, err := readAs(conn); reading <- err }() // go-zookeeper's receive loop

	added := make(chan (<-chan Reply), 1)
	go func() {
		ch, err := watches.Add(&Watch{Path: "/p", Mode: Persistent, Deliver: func(Event) {}, End: func() {}})
		require.NoError(t, err)
		added <- ch
	}()
	select {
	case ch := <-added:
		select {
		case _, ok := <-ch:
			require.False(t, ok, "no reply: the connection ended")
		case <-time.After(time.Minute):
			t.Fatal("the request did not end with its connection")
		}
	case <-time.After(time.Minute):
		t.Fatal("AddWatch's write is stuck on a server that does not read")
	}
	require.Error(t, <-reading, "the connection ends")
}

// Only a server without persistent watches ends them: any other refusal of the
// SetWatches2 that sets them again (a server that wanted credentials first, say)
// drops the connection, and the next sets them again.
func TestARefusedSetWatches2DropsTheConnectionAndKeepsTheWatches(t *testing.T) {
	for _, tc := range []struct {
		code  int32
		ended bool
	}{{codeSessionRequiresAuth, false}, {-8, false}, {CodeUnimplemented, true}} {
		watches := NewWatches(testHandle(t, nil).cfg.Log)
		h := testHandle(t, watches)
		ended := make(chan struct{})
		_, err := watches.Add(&Watch{Path: "/p", Mode: Persistent, Deliver: func(Event) {}, End: func() { close(ended) }})
		require.ErrorIs(t, err, ErrConnectionLost)
		conn, server := pipeHandleConn(t, h)
		srv := &wiretest.Conn{Conn: server}
		sendAsync(srv, wiretest.ConnectResponse(4000, 7))
		_, err = readAs(conn)
		require.NoError(t, err)
		r, err := srv.ReadRequest()
		require.NoError(t, err)
		require.Equal(t, int32(opcodeSetWatches2), r.Opcode)
		reading := make(chan error, 1)
		go func() { _, err := readAs(conn); reading <- err }() // the reply is ours: go-zookeeper sees none
		sendAsync(srv, wiretest.Header(r.Xid, 0, tc.code))
		if tc.ended {
			<-ended
			require.True(t, watches.Unsupported())
			_ = conn.Close()
			<-reading
			continue
		}
		select {
		case err := <-reading:
			require.Error(t, err, "code %d: the connection ends", tc.code)
		case <-ended:
			t.Fatalf("code %d ended the watch", tc.code)
		}
		require.False(t, watches.Unsupported())
	}
}
