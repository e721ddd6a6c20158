package group

import (
	"testing"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// A Go member and Apache Curator's GroupMember (through the peer) in one group see
// each other, payloads included, and each other's leaving.
func TestCuratorGroupMember(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	peer := zkrtest.StartCuratorPeer(t, "group", srv.Addr(), "/groups/interop", "java", "from-java")
	peer.Expect(t, "READY")
	goMember := join(t, newClient(t, []string{srv.Addr()}), "/groups/interop", "go", "from-go")

	both := map[string]string{"go": "from-go", "java": "from-java"}
	sees(t, goMember, both)
	eventually(t, func() bool { return equal(peer.Members(t), both) })

	peer.Send(t, "payload changed-in-java")
	peer.Expect(t, "DONE")
	both["java"] = "changed-in-java"
	sees(t, goMember, both)
	if err := goMember.SetPayload(ctx, []byte("changed-in-go")); err != nil {
		t.Fatal(err)
	}
	both["go"] = "changed-in-go"
	eventually(t, func() bool { return equal(peer.Members(t), both) })

	peer.Send(t, "release")
	peer.Expect(t, "RELEASED")
	sees(t, goMember, map[string]string{"go": "changed-in-go"})
}

// A FixedPayload member and Curator's GroupMember see each other: Curator's reader
// needs only READ on our node, and ours watches Curator's node, whose payload may
// change.
func TestCuratorAndFixedPayloadMember(t *testing.T) {
	srv := zktest.NewServer(t)
	peer := zkrtest.StartCuratorPeer(t, "group", srv.Addr(), "/groups/interop", "java", "from-java")
	peer.Expect(t, "READY")
	goMember, _ := joinFixed(t, srv, "/groups/interop", "go", "from-go")

	both := map[string]string{"go": "from-go", "java": "from-java"}
	sees(t, goMember, both)
	eventually(t, func() bool { return equal(peer.Members(t), both) })

	peer.Send(t, "payload changed-in-java")
	peer.Expect(t, "DONE")
	both["java"] = "changed-in-java"
	sees(t, goMember, both)

	peer.Send(t, "release")
	peer.Expect(t, "RELEASED")
	sees(t, goMember, map[string]string{"go": "from-go"})
}
