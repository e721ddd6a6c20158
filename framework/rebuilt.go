package framework

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/go-zookeeper/zk"
)

// A ZooKeeper ensemble's zxid only grows: every transaction it commits gets the next
// one, and every reply carries the server's latest. An ensemble replaced by a fresh
// one (or restored from an older copy) starts again lower, and the client sees it in
// one way only: in a new session, the server's zxid is below the highest the client
// had. Its old session cannot have survived (the server refuses a client that has
// seen more than it has; the client gives that session up after a whole session
// timeout, Lost, and starts afresh on a new handle, which asks from zxid 0), so every
// new session is checked before it is published: a Sync brings whichever server it
// reached up to date with its ensemble's leader, and its reply's zxid is then at
// least every zxid the ensemble ever answered with, unless it forgot them. Only
// then is the session published, so that a listener hears Rebuilt before the
// Reconnected that lets requests run on the new history.

// sawZxid notes the zxid in the header of a packet from the server behind h (every
// reply's; a notification's on 3.9): h's latest, and the highest the client has
// seen in the history it last checked. The connection's reader calls it.
func (c *core) sawZxid(h *handle, zxid int64) {
	if zxid <= 0 { // no zxid: 3.8's notifications, replies that carry none
		return
	}
	h.zxid.Store(zxid)
	for {
		seen := c.seenZxid.Load()
		if zxid <= seen || c.seenZxid.CompareAndSwap(seen, zxid) {
			return
		}
	}
}

// checkHistory tells whether the ensemble behind h, on which the session sid has
// just been made, has less history than the client has seen (rebuilt), before the
// session is published. It runs on the state goroutine with c.mu unlocked. ok is
// false when the check failed with the connection: the session is not published
// yet, and the next connection checks again.
func (c *Client) checkHistory(h *handle, sid int64) (rebuilt, ok bool) {
	c.mu.Lock()
	same, first := sid == c.link.session.id, c.link.session.state == Latent
	c.mu.Unlock()
	seen := c.seenZxid.Load()
	if same || first || seen == 0 {
		return false, true // the same session is the same history; a first one has none to compare
	}
	_, err := use(h, "/", func(conn *zk.Conn, p string) (string, error) { return conn.Sync(p) })
	switch {
	case err != nil && IsRetryable(err):
		return false, false
	case err != nil:
		c.log.Warn("zkrecipes: cannot compare the new session's history with the old one's", "error", err)
		return false, true
	}
	server := h.zxid.Load()
	if server >= seen {
		return false, true
	}
	c.seenZxid.Store(server) // later packets come from this history
	c.rebuilds.Add(1)
	c.log.Warn("zkrecipes: the ensemble has less history than this client has seen: it was rebuilt or "+
		"restored from an older copy; zxids and fencing tokens start again lower",
		"seen_zxid", fmt.Sprintf("%#x", seen), "server_zxid", fmt.Sprintf("%#x", server),
		"session", fmt.Sprintf("%#x", sid))
	return true, true
}

// A server refuses a session to a client that has seen a higher zxid than its own
// (the client must try another server, which has it): it reads the connect request,
// then closes the connection without a word. A server not running (starting up, in
// a leader election) does the same, and there the session may well be alive: only
// a look at the server itself tells them apart. So when a server closes a
// connection of a handle that has seen zxids without answering, the client asks it
// for a session from zxid 0 on a connection of its own (probe), and closes that
// session at once: the close is a transaction of the server's ensemble, whose zxid
// is above every zxid the ensemble ever committed. Below what the client has seen,
// the ensemble has lost that history, and the old session with it: the client gives
// the session up (Lost) and starts afresh on a new handle at once, rather than
// after a whole session timeout. A server that does not answer the probe decides
// nothing: the session timeout still ends the wait.

// unanswered is told of every connection of h that ended before the connect
// response: got bytes had come, and err ended it.
func (c *core) unanswered(h *handle, addr string, got int, err error) {
	if got != 0 || !errors.Is(err, io.EOF) || h.zxid.Load() == 0 || h.ctx.Err() != nil {
		return // no refusal, or a connect request that asked for no history
	}
	if !h.probing.CompareAndSwap(false, true) {
		return
	}
	c.loops.Add(1)
	go func() {
		defer c.loops.Done()
		defer h.probing.Store(false)
		server, err := c.probe(h, addr)
		seen := c.seenZxid.Load()
		if err != nil || server >= seen {
			c.log.Debug("zkrecipes: a server closed the connection without answering", "server", addr,
				"probe_zxid", fmt.Sprintf("%#x", server), "seen_zxid", fmt.Sprintf("%#x", seen), "error", err)
			return
		}
		c.log.Warn("zkrecipes: the server refuses the session: it has less history than this client has seen; "+
			"giving the session up for a new one", "server", addr,
			"seen_zxid", fmt.Sprintf("%#x", seen), "server_zxid", fmt.Sprintf("%#x", server))
		c.events.Push(sessionEvent{gen: h.gen, kind: refusedBehind})
	}()
}

// A probe's requests.
const (
	probeConnect   = 4 + 8 + 4 + 8 + 4 + 16 // protocol version, last zxid, timeout, session, password
	opCloseSession = -11
)

// probe asks the server at addr, on a connection of its own, for a session as a
// client that has seen nothing, closes that session, and returns the zxid of the
// close. It gives up when h closes, and after a connection timeout.
func (c *core) probe(h *handle, addr string) (int64, error) {
	bound := min(c.opts.connectionTimeout, c.opts.sessionTimeout)
	raw, err := c.opts.dialer("tcp", addr, bound)
	if err != nil {
		return 0, err
	}
	defer raw.Close()
	defer context.AfterFunc(h.ctx, func() { _ = raw.Close() })()
	conn := raw
	if c.opts.tls != nil {
		if conn, err = handshake(h.ctx, raw, c.opts.tls, addr, h.hosts.target(addr).host, bound); err != nil {
			return 0, err
		}
	}
	if err := conn.SetDeadline(time.Now().Add(bound)); err != nil {
		return 0, err
	}
	req := binary.BigEndian.AppendUint32(nil, probeConnect)
	req = binary.BigEndian.AppendUint32(req, 0) // protocol version
	req = binary.BigEndian.AppendUint64(req, 0) // last zxid seen: none
	req = binary.BigEndian.AppendUint32(req, uint32(c.opts.sessionTimeout.Milliseconds()))
	req = binary.BigEndian.AppendUint64(req, 0) // session: a new one
	req = binary.BigEndian.AppendUint32(req, 16)
	req = append(req, make([]byte, 16)...)
	if _, err := conn.Write(req); err != nil {
		return 0, err
	}
	resp, err := readProbePacket(conn)
	if err != nil {
		return 0, err
	}
	if len(resp) < 16 || binary.BigEndian.Uint64(resp[8:16]) == 0 {
		return 0, errors.New("no session in the connect response")
	}
	op := int32(opCloseSession)
	closeSession := binary.BigEndian.AppendUint32(nil, 8)
	closeSession = binary.BigEndian.AppendUint32(closeSession, 1) // xid
	closeSession = binary.BigEndian.AppendUint32(closeSession, uint32(op))
	if _, err := conn.Write(closeSession); err != nil {
		return 0, err
	}
	reply, err := readProbePacket(conn)
	if err != nil {
		return 0, err
	}
	if len(reply) < 16 {
		return 0, fmt.Errorf("a reply of %d bytes to closeSession", len(reply))
	}
	return int64(binary.BigEndian.Uint64(reply[4:12])), nil
}

// readProbePacket reads one packet of a probe: a connect response, or a reply with
// no body. Either is small; a larger length is not ZooKeeper's answer.
func readProbePacket(r io.Reader) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n > 256 {
		return nil, fmt.Errorf("a packet of %d bytes in answer to a probe", n)
	}
	p := make([]byte, n)
	_, err := io.ReadFull(r, p)
	return p, err
}
