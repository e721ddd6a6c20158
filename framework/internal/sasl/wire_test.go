package sasl

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// zkConn is the least of ZooKeeper's client protocol that proves a mechanism against
// a real server: a session, sasl requests, and a create. Each packet is a 4-byte
// length and a body; a request's body starts with its xid and opcode, a reply's with
// its xid, zxid and error code.
type zkConn struct {
	c   net.Conn
	xid int32
}

// dialSession connects to addr and establishes a session (ConnectRequest).
func dialSession(t *testing.T, addr string) *zkConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	z := &zkConn{c: c}
	var req []byte
	req = binary.BigEndian.AppendUint32(req, 0)     // protocol version
	req = binary.BigEndian.AppendUint64(req, 0)     // last zxid seen
	req = binary.BigEndian.AppendUint32(req, 10000) // session timeout, ms
	req = binary.BigEndian.AppendUint64(req, 0)     // session id: a new one
	req = appendBuffer(req, make([]byte, 16))       // password
	req = append(req, 0)                            // read-only: no
	require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
	require.NoError(t, z.write(req))
	resp, err := z.read()
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(resp), 16, "connect response")
	require.NotZero(t, binary.BigEndian.Uint64(resp[8:16]), "session id")
	return z
}

func appendBuffer(b, data []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	return append(b, data...)
}

func (z *zkConn) write(body []byte) error {
	_, err := z.c.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...))
	return err
}

func (z *zkConn) read() ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(z.c, n[:]); err != nil {
		return nil, err
	}
	body := make([]byte, binary.BigEndian.Uint32(n[:]))
	_, err := io.ReadFull(z.c, body)
	return body, err
}

// call sends a request and returns its reply's error code and body. ctx's end
// interrupts it.
func (z *zkConn) call(ctx context.Context, op int32, body []byte) (int32, []byte, error) {
	stop := context.AfterFunc(ctx, func() { _ = z.c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	z.xid++
	req := binary.BigEndian.AppendUint32(nil, uint32(z.xid))
	req = binary.BigEndian.AppendUint32(req, uint32(op))
	if err := z.write(append(req, body...)); err != nil {
		return 0, nil, err
	}
	reply, err := z.read()
	if err != nil {
		return 0, nil, err
	}
	if len(reply) < 16 {
		return 0, nil, fmt.Errorf("reply of %d bytes", len(reply))
	}
	if xid := int32(binary.BigEndian.Uint32(reply)); xid != z.xid {
		return 0, nil, fmt.Errorf("reply to xid %d, not %d", xid, z.xid)
	}
	return int32(binary.BigEndian.Uint32(reply[12:16])), reply[16:], nil
}

// send is the Send of an exchange on this session.
func (z *zkConn) send(ctx context.Context, token []byte) ([]byte, error) {
	code, body, err := z.call(ctx, OpSASL, AppendRequest(nil, token))
	if err != nil {
		return nil, err
	}
	if code != 0 {
		return nil, Refused(code)
	}
	return DecodeResponse(body)
}

// create creates a persistent node open to all, and returns ZooKeeper's error code.
func (z *zkConn) create(ctx context.Context, path string) (int32, error) {
	var req []byte
	req = appendBuffer(req, []byte(path))
	req = appendBuffer(req, nil)                // data
	req = binary.BigEndian.AppendUint32(req, 1) // one ACL: world:anyone, every permission
	req = binary.BigEndian.AppendUint32(req, 31)
	req = appendBuffer(req, []byte("world"))
	req = appendBuffer(req, []byte("anyone"))
	req = binary.BigEndian.AppendUint32(req, 0) // persistent
	code, _, err := z.call(ctx, 1, req)
	return code, err
}

// errRequiresAuth is ZooKeeper's "session requires authentication".
const errRequiresAuth = -124

func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
