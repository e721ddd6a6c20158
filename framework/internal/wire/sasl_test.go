package wire

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework/internal/sasl"
	"github.com/zkrecipes/zkrecipes/framework/internal/wire/wiretest"
)

// testMech is a mechanism of one round trip: it sends "hello", and is done when
// the server answers "welcome".
type testMech struct{}

func (testMech) Name() string           { return "TEST" }
func (testMech) Start() ([]byte, error) { return []byte("hello"), nil }
func (testMech) Step(ch []byte) ([]byte, bool, error) {
	if string(ch) != "welcome" {
		return nil, false, errors.New("not welcome")
	}
	return nil, true, nil
}

// saslConn is a connection, over a pipe, of a handle that logs in with testMech
// within handshake; it returns the server's end.
func saslConn(t *testing.T, handshake time.Duration) (*Conn, net.Conn) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	log := slog.New(slog.DiscardHandler)
	watches := NewWatches(log)
	h := NewHandle(Config{Ctx: ctx, Log: log, MaxPacket: 1 << 20, Handshake: handshake, Watches: watches,
		Failed: func(string, int, error) {}, Answered: func() {},
		SASL: func(host string) (sasl.Mechanism, error) {
			require.Equal(t, "zk1", host)
			return testMech{}, nil
		}})
	watches.Follow(h)
	server, client := net.Pipe()
	conn := h.NewConn(client, "pipe", "zk1")
	t.Cleanup(func() { _ = server.Close(); _ = conn.Close() })
	return conn, server
}

// readRequest reads one request from the server's end: its xid, opcode and the rest.
func readRequest(server net.Conn) (xid, op int32, body []byte, err error) {
	var size [4]byte
	if _, err := io.ReadFull(server, size[:]); err != nil {
		return 0, 0, nil, err
	}
	p := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(server, p); err != nil || len(p) < 8 {
		return 0, 0, nil, errors.Join(err, io.ErrUnexpectedEOF)
	}
	return int32(binary.BigEndian.Uint32(p)), int32(binary.BigEndian.Uint32(p[4:])), p[8:], nil
}

// The login is the first thing written on the connection, with an xid of ours,
// and go-zookeeper has the connect response, whole, only after it; then the gate
// opens, and the framework's own requests follow.
func TestTheLoginComesBeforeAnything(t *testing.T) {
	conn, server := saslConn(t, time.Minute)
	served := make(chan error, 1)
	go func() {
		if _, err := server.Write(session); err != nil {
			served <- err
			return
		}
		xid, op, body, err := readRequest(server)
		if err != nil {
			served <- err
			return
		}
		if op != sasl.OpSASL || !isOurXid(xid) || string(body) != string(sasl.AppendRequest(nil, []byte("hello"))) {
			served <- errors.New("not the login's request")
			return
		}
		_, err = server.Write(packet(append(wiretest.Header(xid, 3, 0), sasl.AppendRequest(nil, []byte("welcome"))...)))
		served <- err
	}()
	p, err := readAs(conn)
	require.NoError(t, err)
	require.Equal(t, session, p, "go-zookeeper's connect response, after the login")
	require.NoError(t, <-served)
	require.NoError(t, conn.h.Refused())

	ops := make(chan int32, 1)
	go func() { // a pipe's write waits for its read
		_, op, _, _ := readRequest(server)
		ops <- op
	}()
	conn.request(frame(0, opcodeRemoveWatches, jute(nil).str("/p").int(removeAny)))
	require.EqualValues(t, opcodeRemoveWatches, <-ops, "the gate opened after the login")
}

// A server that answers the login wrongly, or not at all, ends the connection
// before go-zookeeper has the connect response, with an error that says what was
// wrong, kept for the client to report; never a hang.
func TestAHostileAnswerToTheLoginEndsTheConnection(t *testing.T) {
	answer := func(xid int32, code int32, body []byte) []byte {
		return packet(append(wiretest.Header(xid, 3, code), body...))
	}
	for name, tc := range map[string]struct {
		reply func(xid int32) []byte // nil: no answer
		says  string
	}{
		"refused":         {func(xid int32) []byte { return answer(xid, -124, nil) }, "refused the SASL login (ZooKeeper error -124)"},
		"another xid":     {func(xid int32) []byte { return answer(xid-1, 0, sasl.AppendRequest(nil, []byte("welcome"))) }, "in answer to the sasl request"},
		"go-zookeeper's":  {func(int32) []byte { return answer(1, 0, nil) }, "in answer to the sasl request"},
		"a notification":  {func(int32) []byte { return packet(wiretest.Notification(3, 1, "/p")) }, "in answer to the sasl request"},
		"negative length": {func(int32) []byte { return raw(-5, nil) }, "a packet of -5 bytes"},
		"too large":       {func(int32) []byte { return raw(1<<30, nil) }, "a packet of 1073741824 bytes"},
		"no token":        {func(xid int32) []byte { return answer(xid, 0, []byte{1, 2}) }, "malformed SetSASLResponse"},
		"token too large": {func(xid int32) []byte { return answer(xid, 0, jute(nil).int(1<<20)) }, "token too large"},
		"wrong token":     {func(xid int32) []byte { return answer(xid, 0, sasl.AppendRequest(nil, []byte("go away"))) }, "not welcome"},
		"silence":         {nil, "no end to the SASL TEST login within 50ms"},
	} {
		t.Run(name, func(t *testing.T) {
			conn, server := saslConn(t, 50*time.Millisecond)
			go func() {
				if _, err := server.Write(session); err != nil {
					return
				}
				xid, _, _, err := readRequest(server)
				if err == nil && tc.reply != nil {
					_, _ = server.Write(tc.reply(xid))
				}
				_, _ = io.Copy(io.Discard, server)
			}()
			_, err := readAs(conn)
			require.ErrorContains(t, err, tc.says)
			require.ErrorContains(t, conn.h.Refused(), tc.says)
			require.ErrorContains(t, conn.h.Refused(), "pipe", "names the server")
		})
	}
}
