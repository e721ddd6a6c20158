package wire

import (
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
)

// The packets the server sends, one type each, decoded from a packet's bytes after
// its length. Each decoder checks the packet's shape and says what is wrong.

// ErrProtocol is the error of a connection whose server sent what ZooKeeper does
// not: the connection is dropped, and the next is tried.
var ErrProtocol = errors.New("framework: the server broke ZooKeeper's protocol")

// connectResponse is the server's first packet on a connection.
type connectResponse struct {
	protocol  int32
	timeoutMs int32
	session   int64 // 0: the session has expired
	password  string
}

// minConnectResponse is the shortest connect response: its fields, an empty password.
const minConnectResponse = 4 + 4 + 8 + 4

func decodeConnectResponse(p []byte) (connectResponse, error) {
	r := reader{b: p}
	m := connectResponse{protocol: r.int(), timeoutMs: r.int(), session: r.long(), password: r.str()}
	switch {
	case r.err != nil:
		return m, fmt.Errorf("%w: a connect response of %d bytes: %w", ErrProtocol, len(p), r.err)
	case m.session != 0 && m.timeoutMs <= 0:
		// go-zookeeper makes its ping ticker from it: time.NewTicker panics.
		return m, fmt.Errorf("%w: a session timeout of %d ms granted", ErrProtocol, m.timeoutMs)
	}
	return m, nil // a read-only flag may follow (3.4+), unread
}

// replyHeader is a reply's length and header: length, xid, zxid, error code.
const replyHeader = 4 + 4 + 8 + 4

// header is the header of every packet after the connect response.
type header struct {
	xid  int32
	zxid int64
	code int32
}

func decodeHeader(p []byte) (header, error) {
	r := reader{b: p}
	h := header{xid: r.int(), zxid: r.long(), code: r.int()}
	if r.err != nil {
		return h, fmt.Errorf("%w: a reply of %d bytes, shorter than a header", ErrProtocol, len(p))
	}
	return h, nil
}

// notification is a watch notification's body, after its header.
type notification struct {
	typ   zk.EventType
	state int32
	path  string
}

func decodeNotification(p []byte) (notification, error) {
	r := reader{b: p}
	n := notification{typ: zk.EventType(r.int()), state: r.int(), path: r.str()}
	if r.err != nil {
		return n, fmt.Errorf("%w: a notification of %d bytes: %w", ErrProtocol, len(p), r.err)
	}
	return n, nil
}

// truncated is b as a message quotes it: its first 32 bytes.
func truncated(b []byte) string {
	const most = 32
	if len(b) > most {
		return string(b[:most]) + "…"
	}
	return string(b)
}
