package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/framework/internal/wire/wiretest"
)

// A fuzz target per decoder of the server's bytes, and one for the whole stream as
// go-zookeeper reads it through a Conn. The corpus is in testdata/fuzz.

func FuzzConnectResponse(f *testing.F) {
	f.Add([]byte(wiretest.ConnectResponse(4000, 7)))
	f.Add([]byte(wiretest.ConnectResponse(0, 0)))
	f.Fuzz(func(t *testing.T, p []byte) {
		m, err := decodeConnectResponse(p)
		if err == nil && m.session != 0 && m.timeoutMs <= 0 {
			t.Fatalf("a session with a timeout of %d ms accepted", m.timeoutMs)
		}
		if err == nil && len(p) < minConnectResponse {
			t.Fatalf("a connect response of %d bytes accepted", len(p))
		}
	})
}

func FuzzHeader(f *testing.F) {
	f.Add([]byte(wiretest.Header(5, 10, 0)))
	f.Add([]byte(wiretest.Header(-1, -1, 0)))
	f.Fuzz(func(t *testing.T, p []byte) {
		h, err := decodeHeader(p)
		if (err == nil) != (len(p) >= replyHeader-4) {
			t.Fatalf("%d bytes: %v", len(p), err)
		}
		if err == nil && !bytes.Equal(wiretest.Header(h.xid, h.zxid, h.code), p[:replyHeader-4]) {
			t.Fatalf("%x decoded as %+v", p, h)
		}
	})
}

// FuzzNotification decodes a notification's body; 3.8's and 3.9's differ only in
// the header's zxid (-1 on 3.8), which FuzzHeader covers.
func FuzzNotification(f *testing.F) {
	f.Add([]byte(wiretest.Notification(-1, int32(zk.EventNodeDataChanged), "/p")[replyHeader-4:]))
	f.Add([]byte(wiretest.Notification(9, int32(zk.EventNodeCreated), "/a/b")[replyHeader-4:]))
	f.Fuzz(func(t *testing.T, p []byte) {
		n, err := decodeNotification(p)
		if err != nil {
			return
		}
		if int32(binary.BigEndian.Uint32(p[8:])) < 0 { // jute's null string
			if n.path != "" {
				t.Fatalf("%x decoded as %+v", p, n)
			}
			return
		}
		again := wiretest.Jute(nil).Int(int32(n.typ)).Int(n.state).Str(n.path)
		if !bytes.HasPrefix(p, again) {
			t.Fatalf("%x decoded as %+v", p, n)
		}
	})
}

// FuzzSetWatches2 encodes paths (NUL-separated) into SetWatches2 requests, and
// reads them back as a server does: every path once, in one of the two lists, and
// no request over the limit unless it holds one path alone.
func FuzzSetWatches2(f *testing.F) {
	f.Add("/a\x00/b/c", "/r\x00/s")
	f.Add(strings.Repeat("/long", 40000), "")
	f.Fuzz(func(t *testing.T, persistent, recursive string) {
		ps, rs := split(persistent), split(recursive)
		var gotP, gotR []string
		for _, body := range setWatches2Bodies(ps, rs) {
			r := reader{b: body}
			r.long()
			var lists [5][]string
			for i := range lists {
				n := r.int()
				for range n {
					lists[i] = append(lists[i], r.str())
				}
			}
			if r.err != nil || len(r.b) != 0 {
				t.Fatalf("a body that does not read back: %v, %d bytes left", r.err, len(r.b))
			}
			if len(body) > setWatches2Limit+64 && len(lists[3])+len(lists[4]) > 1 {
				t.Fatalf("a body of %d bytes with %d paths", len(body), len(lists[3])+len(lists[4]))
			}
			gotP, gotR = append(gotP, lists[3]...), append(gotR, lists[4]...)
		}
		if !slices.Equal(gotP, ps) || !slices.Equal(gotR, rs) {
			t.Fatalf("paths %q %q read back as %q %q", ps, rs, gotP, gotR)
		}
	})
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\x00")
}

// FuzzRequest reads go-zookeeper's requests as the connection does (their path and
// watch flag, SetWatches' paths): whatever the bytes, no panic.
func FuzzRequest(f *testing.F) {
	f.Add([]byte(frame(3, opcodeGetData, jute(nil).str("/p").int(1<<24))))
	f.Add([]byte(frame(4, opcodeSetWatches, jute(nil).long(7).strs([]string{"/a"}).strs(nil).strs([]string{"/b"}))))
	f.Fuzz(func(t *testing.T, p []byte) {
		requestPath(p)
		setWatchesPaths(p)
	})
}

// FuzzStream hands go-zookeeper, through a Conn, a connect response with a session
// and then any bytes, on a connection with a removeWatches request of the
// framework's waiting for its reply: reading ends (at the bytes' end at the
// latest), without a panic, and the request gets one reply or none.
func FuzzStream(f *testing.F) {
	ours := ourXid(1)
	f.Add([]byte(nil))
	f.Add(append(packet(wiretest.Header(ours, 3, 0)), ping...))
	f.Add(packet(wiretest.Header(ours, 3, codeNoWatcher)))
	f.Add(append(packet(wiretest.Notification(5, int32(zk.EventNodeDeleted), "/p")), packet(wiretest.Header(1, 5, 0))...))
	f.Add(raw(-1, nil))
	f.Add(raw(12, wiretest.Header(1, 1, 0)))
	f.Fuzz(func(t *testing.T, stream []byte) {
		server, client := net.Pipe()
		conn := testHandle(t, nil).NewConn(client, "fuzz", "fuzz")
		defer func() { _ = conn.Close() }()
		go func() {
			_, _ = server.Write(session)
			_, _ = server.Write(stream)
			_ = server.Close()
		}()
		go func() { _, _ = io.Copy(io.Discard, server) }()
		if _, err := readAs(conn); err != nil {
			t.Fatalf("the connect response: %v", err)
		}
		ch := conn.request(frame(0, opcodeRemoveWatches, jute(nil).str("/p").int(removePersistent)))
		for {
			if _, err := readAs(conn); err != nil {
				break
			}
		}
		_ = conn.Close()
		if _, ok := <-ch; ok {
			select {
			case <-ch:
				t.Fatal("two replies")
			default:
			}
		}
	})
}

// FuzzReplies reads any bytes as the reply of each of the framework's own calls: a
// decoder fails with ErrReply or decodes what the bytes hold (a listing's names
// encoded again are its first bytes), never panics, and makes no more names than
// the reply has bytes for.
func FuzzReplies(f *testing.F) {
	f.Add([]byte(append(wiretest.Jute(nil).Int(2).Str("lock-1").Str("lock-2"), statBytes(stat)...)))
	f.Add([]byte(append(wiretest.Jute(nil).Str("value"), statBytes(stat)...)))
	f.Add([]byte(wiretest.Jute(nil).Int(-1)))
	f.Add([]byte(statBytes(stat)))
	f.Fuzz(func(t *testing.T, p []byte) {
		r := Reply{Body: p}
		checkReplyError := func(err error) {
			if err != nil && !errors.Is(err, ErrReply) {
				t.Fatalf("%x: %v", p, err)
			}
		}
		names, _, err := r.ChildrenReply()
		checkReplyError(err)
		if err == nil {
			again := wiretest.Jute(nil).Int(int32(len(names)))
			for _, n := range names {
				again = again.Str(n)
			}
			if !bytes.HasPrefix(p, again) {
				t.Fatalf("%x decoded as %q", p, names)
			}
		}
		_, err = r.StatReply()
		checkReplyError(err)
		data, _, err := r.DataReply()
		checkReplyError(err)
		if err == nil && data != nil && !bytes.HasPrefix(p, wiretest.Jute(nil).Str(string(data))) {
			t.Fatalf("%x decoded as %q", p, data)
		}
		s, err := r.PathReply()
		checkReplyError(err)
		if err == nil && s != "" && !bytes.HasPrefix(p, wiretest.Jute(nil).Str(s)) {
			t.Fatalf("%x decoded as %q", p, s)
		}
	})
}
