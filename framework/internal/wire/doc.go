// Package wire is the connection between go-zookeeper and a ZooKeeper server, as
// the framework runs it: a net.Conn that go-zookeeper reads and writes, with a
// small wire client of the framework's own inside it.
//
// Reading, a Conn takes whole packets from the server. It bounds their size, reads
// the connect response (the session timeout granted, whether the session is still
// there), keeps the replies to the framework's own requests from go-zookeeper,
// hands notifications to the persistent watches, and notes when a server last said
// anything. go-zookeeper reads the body of a reply to one of its requests itself,
// straight from the connection, after its header, so that no copy of it is kept.
// Writing, a Conn sends go-zookeeper's packets and the framework's own one whole
// packet at a time, and watches go-zookeeper's requests for the one-shot watches
// they set (oneShots), so that it knows go-zookeeper's watches as go-zookeeper does.
//
// The framework's own requests are its persistent watches' (watches.go), the node
// operations that set no watch (calls.go: a listing, exists, a read, a create, a
// set, a delete), and its one-shot data watches (watchcalls.go): a getData's or a
// setWatches' watch of the connection's own, and setWatches' watches that last the
// session, which the handle sets again on every new connection, as go-zookeeper
// sets its own (lasting.go). It writes them on the caller's goroutine and decodes
// their replies itself, recording their zxids as go-zookeeper's (lastzxid.go); the
// other requests that set a one-shot watch are go-zookeeper's.
//
// A Handle is what the connections of one go-zookeeper handle share (its session's
// timeout, its one-shot watches, go-zookeeper #35's hold); Watches are a client's
// persistent watches, set on the connection of the handle it follows.
//
// # The protocol, as this package relies on it
//
// From the servers' code (apache/zookeeper: NIOServerCnxn, FinalRequestProcessor,
// DataTree, WatchManager, 3.8 and 3.9), checked by this package's tests and the
// framework's on 3.8.0 and 3.9:
//
//   - Every packet is a 4-byte big-endian signed length, then that many bytes. The
//     first reply on a connection is the connect response: protocol version (4),
//     session timeout in ms (4), session id (8, 0 when the session has expired),
//     password. Every later reply starts with a header: xid (4), zxid (8), error
//     code (4).
//   - A request is a length, then xid (4), opcode (4) and the body. The server
//     answers each request with the xid it carried, whatever it is, credentials
//     (setAuth) included: the Java client sends those with xid -4, go-zookeeper with
//     its own count. The server's own packets have xid -1 (notifications) and -2
//     (the replies to pings, which every client sends with -2).
//   - A connection's replies and notifications come in the order the server made
//     them: a change's notification before the reply to the request that made it.
//     A session's requests are answered in the order they were written.
//   - A successful write's reply carries, as its zxid, the zxid of its transaction:
//     the server applies a session's writes one at a time and answers each with the
//     last zxid it applied. A create's is its node's czxid (Creates).
//   - A notification is the header with xid -1, then type (4), state (4), path. Its
//     zxid is the change's on 3.9, -1 on 3.8.
//   - Watches belong to the connection, not the session: a new connection has none
//     until the client sets them again. SetWatches2 (105) sets persistent and
//     recursive ones again without replaying what changed meanwhile (DataTree
//     .setWatches adds them as they are), so the follower must read again.
//   - 3.8 keeps one mode per path and connection in each of its two watch tables
//     (data, children), and files a recursive watch in both: a one-shot watch set on
//     a path replaces a persistent one there, and removeWatches knows only the types
//     1 (children), 2 (data) and 3 (any, which also drops one-shot watches). 3.9
//     keeps every mode of a path apart and adds the types 4 (persistent) and 5
//     (persistent recursive).
//
// # Invariants
//
// Each is tested in this package.
//
//   - The xid ranges. go-zookeeper numbers its requests from 1 up, masked to 31 bits;
//     the server's own packets use -1 and -2. The framework's requests use a
//     negative range far below them (ourXid: -2^16 and down), which go-zookeeper
//     never uses: a reply in it is the framework's and never reaches go-zookeeper, a
//     reply with a non-negative xid is go-zookeeper's, whole and untouched.
//   - Whole-packet writes. go-zookeeper writes each packet in one call; the
//     framework's packets are written between them, never inside one (one lock),
//     each batch under a write deadline of its own, never on the reader's goroutine;
//     a failed write of ours ends the connection.
//   - Nothing written before the credentials. On each connection the framework's
//     requests (SetWatches2, AddWatch, RemoveWatches, its calls) wait until the server has
//     accepted the connection's credentials (Config.Credentials setAuth replies):
//     a server that enforces authentication refuses anything else first. What a
//     server refuses is kept for the client to report (Handle.Refused). A SASL
//     login (Config.SASL) comes first of all: it runs on the raw connection before
//     go-zookeeper is handed the connect response, so nothing of go-zookeeper's
//     nor ours is written before it ends (sasl.go).
//   - go-zookeeper's last zxid. The zxid of a reply to a call of the framework's is
//     recorded as go-zookeeper's last zxid, before the reply reaches its caller:
//     go-zookeeper connects again with it, as if it had read the reply itself.
//   - Notifications before replies. A notification reaches the persistent watches
//     and the record of one-shot watches before the next packet is read, so before
//     the reply to the request that made its change; the data watches of the
//     connection's own hear it once go-zookeeper has taken it in (its next read),
//     still before the next packet, so after the client's subscribers.
//   - Lasting watches. The framework's watches that last the session are set again
//     on each new connection of it, as of go-zookeeper's last zxid, before any
//     request of the framework's after the connect response; a notification that
//     fires one, or the session's expiry, drops it.
//   - Sizes. A length is read signed and checked before anything is allocated for
//     it: a negative one, one shorter than a header, or one above the maximum drops
//     the connection; a reply too large to read fails its request instead, and a
//     notification too large drops the connection (a new one sets every watch
//     again). A connect response is checked whole: a server whose first bytes
//     cannot begin one is named with those bytes, quoted (an HTTP server, a TLS
//     port), and a session timeout of 0 or less is refused.
//   - One handle. The persistent watches follow the handle the client uses now
//     (Watches.Follow): an abandoned handle's late packets never reach them.
package wire
