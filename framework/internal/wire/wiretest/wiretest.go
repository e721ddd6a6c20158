// Package wiretest is a fake ZooKeeper server for tests of what a client does with
// a server that misbehaves: it accepts connections on loopback and hands each to a
// function of the test's, with helpers to read requests and write packets in
// ZooKeeper's framing. It is not a ZooKeeper: behaviour is tested against the real
// one (zktest); this is for the bytes no real server sends.
package wiretest

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
)

// Start accepts connections on a loopback port until the test ends, and hands each,
// one at a time, to serve, closing it when serve returns. It returns the address.
func Start(t testing.TB, serve func(c *Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("wiretest: %v", err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { _ = ln.Close(); <-done })
	go func() {
		defer close(done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			serve(&Conn{Conn: conn})
			_ = conn.Close()
		}
	}()
	return ln.Addr().String()
}

// Conn is the server's end of one connection.
type Conn struct{ net.Conn }

// ReadPacket reads one packet from the client: its length, then the rest, which
// it returns.
func (c *Conn) ReadPacket() ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return nil, err
	}
	p := make([]byte, binary.BigEndian.Uint32(size[:]))
	_, err := io.ReadFull(c, p)
	return p, err
}

// Send writes p as one packet: its length, then p.
func (c *Conn) Send(p []byte) error {
	_, err := c.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(p))), p...))
	return err
}

// Accept reads the connect request and answers it with a session of id, granted
// timeoutMs (a real server answers with at least twice its tick).
func (c *Conn) Accept(timeoutMs int32, id int64) error {
	if _, err := c.ReadPacket(); err != nil {
		return err
	}
	return c.Send(ConnectResponse(timeoutMs, id))
}

// Request is a request's header as the client wrote it.
type Request struct {
	Xid, Opcode int32
	Body        []byte
}

// ReadRequest reads one request.
func (c *Conn) ReadRequest() (Request, error) {
	p, err := c.ReadPacket()
	if err != nil {
		return Request{}, err
	}
	if len(p) < 8 {
		return Request{}, io.ErrUnexpectedEOF
	}
	return Request{Xid: int32(binary.BigEndian.Uint32(p)), Opcode: int32(binary.BigEndian.Uint32(p[4:])), Body: p[8:]}, nil
}

// Opcodes a fake server answers itself.
const (
	OpPing         = 11
	OpCloseSession = -11
)

// Serve answers what keeps a session up (pings, and the close with an empty reply)
// and hands every other request to answer, until the connection ends or answer
// returns false.
func (c *Conn) Serve(answer func(r Request) bool) {
	for {
		r, err := c.ReadRequest()
		if err != nil {
			return
		}
		switch r.Opcode {
		case OpPing:
			if c.Send(Header(-2, 0, 0)) != nil {
				return
			}
		case OpCloseSession:
			_ = c.Send(Header(r.Xid, 0, 0))
			return
		default:
			if !answer(r) {
				return
			}
		}
	}
}

// Jute is a packet being encoded: ZooKeeper's serialisation, big-endian, strings
// prefixed by their length.
type Jute []byte

func (j Jute) Int(v int32) Jute  { return binary.BigEndian.AppendUint32(j, uint32(v)) }
func (j Jute) Long(v int64) Jute { return binary.BigEndian.AppendUint64(j, uint64(v)) }
func (j Jute) Str(s string) Jute { return append(j.Int(int32(len(s))), s...) }

// ConnectResponse is a connect response: protocol version 0, the timeout, the
// session id (0: expired) and a password of 16 zeros.
func ConnectResponse(timeoutMs int32, id int64) Jute {
	return Jute(nil).Int(0).Int(timeoutMs).Long(id).Str(string(make([]byte, 16)))
}

// Header is a reply's header.
func Header(xid int32, zxid int64, code int32) Jute {
	return Jute(nil).Int(xid).Long(zxid).Int(code)
}

// Notification is a watch notification of type typ on path.
func Notification(zxid int64, typ int32, path string) Jute {
	return Header(-1, zxid, 0).Int(typ).Int(3).Str(path)
}
