package group

import (
	"fmt"
	"testing"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// A Go member and Apache Curator's GroupMember (through the peer) in one group see
// each other, payloads included, and each other's leaving; a FixedPayload Go member
// too: Curator's reader needs only READ on its node, and it watches Curator's node,
// whose payload may change.
func TestCuratorGroupMember(t *testing.T) {
	for _, fixed := range []bool{false, true} {
		t.Run(fmt.Sprintf("fixed=%v", fixed), func(t *testing.T) { curatorGroupMember(t, fixed) })
	}
}

func curatorGroupMember(t *testing.T, fixed bool) {
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	peer := zkrtest.StartCuratorPeer(t, "group", srv.Addr(), "/groups/interop", "java", "from-java")
	peer.Expect(t, "READY")
	var goMember *Member
	if fixed {
		goMember, _ = joinFixed(t, srv, "/groups/interop", "go", "from-go")
	} else {
		goMember = join(t, newClient(t, []string{srv.Addr()}), "/groups/interop", "go", "from-go")
	}

	both := map[string]string{"go": "from-go", "java": "from-java"}
	sees(t, goMember, both)
	eventually(t, func() bool { return equal(peer.Members(t), both) })

	peer.Send(t, "payload changed-in-java")
	peer.Expect(t, "DONE")
	both["java"] = "changed-in-java"
	sees(t, goMember, both)
	if !fixed {
		if err := goMember.SetPayload(ctx, []byte("changed-in-go")); err != nil {
			t.Fatal(err)
		}
		both["go"] = "changed-in-go"
		eventually(t, func() bool { return equal(peer.Members(t), both) })
	}

	peer.Send(t, "release")
	peer.Expect(t, "RELEASED")
	sees(t, goMember, map[string]string{"go": both["go"]})
}
