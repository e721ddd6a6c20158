package framework

import (
	"fmt"

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
	same := sid == c.link.session.id
	c.mu.Unlock()
	seen := c.seenZxid.Load()
	if same || seen == 0 {
		return false, true // the same session is the same history; a first one has none to compare
	}
	_, err := use(h, func(conn *zk.Conn) (string, error) { return conn.Sync("/") })
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
