package wire

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/zkrecipes/zkrecipes/framework/internal/sasl"
)

// The SASL login. A connection of a client with Config.SASL logs in first, before
// anything else is written on it: once the connect response shows a session, and
// before go-zookeeper has that response, the reader runs the exchange on the raw
// connection (sasl requests with xids of ours, their replies read here), bounded by
// Config.Handshake and the handle's end. go-zookeeper, waiting for the response,
// writes nothing meanwhile, and the framework's own packets wait behind the gate,
// which is still shut. Only after the exchange is the response handed on, and the
// connection goes on as any other: go-zookeeper's credentials, then the gate.
//
// A refused exchange is recorded (Handle.Refused, which WaitConnected reports) and
// ends the connection; go-zookeeper connects again, pausing a second after each
// pass over the servers, so a refusal is retried, not looped on. The exchange runs
// again on every connection: a cut, a move to another server, a new session.

// maxSASLReply bounds a reply to a sasl request: a header and a token's buffer.
const maxSASLReply = replyHeader - 4 + 4 + sasl.MaxTokenSize

// login runs the SASL exchange on a connection whose session the server has just
// established; an error ends the connection.
func (t *Conn) login() error {
	mech, err := t.h.cfg.SASL(t.host)
	if err != nil {
		return t.loginFailed(fmt.Errorf("%s: SASL: %w", t.addr, err))
	}
	ctx, cancel := context.WithTimeout(t.h.cfg.Ctx, t.h.cfg.Handshake)
	defer cancel()
	_ = t.Conn.SetReadDeadline(time.Time{}) // go-zookeeper's, for the connect response: ctx bounds the login
	// ctx's end interrupts a read or a write under way.
	stop := context.AfterFunc(ctx, func() { _ = t.Conn.SetDeadline(time.Unix(1, 0)) })
	err = sasl.Exchange(ctx, mech, t.saslSend)
	if !stop() && err == nil {
		err = ctx.Err() // the deadline is in the past now: the connection is unusable
	}
	switch {
	case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return t.loginFailed(fmt.Errorf("%s: no end to the SASL %s login within %v: %w", t.addr, mech.Name(), t.h.cfg.Handshake, err))
	case err != nil:
		return t.loginFailed(fmt.Errorf("%s: %w", t.addr, err))
	}
	if t.h.cfg.Credentials == 0 {
		t.h.refused.Store(nil) // else when the credentials are accepted (writes.go)
	}
	// Back to go-zookeeper's deadlines: it set its read deadline for the connect
	// response, and sets the next ones itself.
	_ = t.Conn.SetReadDeadline(time.Time{})
	t.wmu.Lock()
	_ = t.setWriteDeadline(t.goDeadline)
	t.wmu.Unlock()
	return nil
}

// loginFailed records why the login failed, for the client to report, and returns it.
func (t *Conn) loginFailed(err error) error {
	if t.h.cfg.Ctx.Err() == nil { // not the handle's own end
		t.h.refuse(err)
	}
	return err
}

// saslSend is the exchange's sasl.Send: one sasl request and its reply, which must
// be the next packet (the connection has nothing else under way yet).
func (t *Conn) saslSend(_ context.Context, token []byte) ([]byte, error) {
	t.cmu.Lock()
	t.xids++
	xid := ourXid(t.xids)
	t.cmu.Unlock()
	t.wmu.Lock()
	_, err := t.Conn.Write(frame(xid, sasl.OpSASL, sasl.AppendRequest(nil, token)))
	t.wmu.Unlock()
	if err != nil {
		return nil, err
	}
	var size [4]byte
	if err := t.readFull(size[:]); err != nil {
		return nil, err
	}
	// Read into a buffer of its own: t.buf holds the connect response, held back.
	n := int(int32(binary.BigEndian.Uint32(size[:])))
	if n < replyHeader-4 || n > maxSASLReply {
		return nil, fmt.Errorf("%w: a packet of %d bytes in answer to a sasl request", ErrProtocol, n)
	}
	p := append(size[:], make([]byte, n)...)
	if err := t.readFull(p[4:]); err != nil {
		return nil, err
	}
	hd, err := decodeHeader(p[4:])
	switch {
	case err != nil:
		return nil, err
	case hd.xid != xid:
		return nil, fmt.Errorf("%w: a packet with xid %d in answer to the sasl request %d", ErrProtocol, hd.xid, xid)
	case hd.code != 0:
		return nil, sasl.Refused(hd.code)
	}
	token, err = sasl.DecodeResponse(p[replyHeader:])
	return token, err
}
