package partition

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/zktest"
)

// A member follows the group, whose payloads say who holds what, not every item's
// lock: its server watches grow with the members, not with the items (issue 28).
// Following every lock queue, as before this change, a member here watched 87.
func TestWatchesFollowTheMembersNotTheItems(t *testing.T) {
	srv := zktest.NewServer(t)
	r := newRegisters(t)
	items := names("job", 60)
	members := map[string]*Partitioner{}
	for _, id := range []string{"a", "b", "c"} {
		members[id] = start(t, newClient(t, []string{srv.Addr()}), "/work", id, r, Items(items...))
	}
	settled(t, r, items, members)

	out, err := srv.FourLetter(testCtx(t), "wchc")
	require.NoError(t, err)
	perSession := watchesPerSession(out)
	require.Len(t, perSession, len(members), "wchc: %s", out)
	for session, n := range perSession {
		// The group's children and its node, each member's node (ours included, which
		// the persistent node also watches), and at most a stray lock node left
		// watched by a queue given up: nothing per item.
		require.LessOrEqual(t, n, 2*len(members)+4, "session %s watches %d nodes for %d items: %s", session, n, len(items), out)
	}
}

// watchesPerSession counts the paths wchc lists under each session.
func watchesPerSession(wchc string) map[string]int {
	counts := map[string]int{}
	session := ""
	for _, line := range strings.Split(wchc, "\n") {
		switch {
		case strings.HasPrefix(line, "0x"):
			session = strings.TrimSpace(line)
			counts[session] += 0
		case strings.HasPrefix(strings.TrimSpace(line), "/") && session != "":
			counts[session]++
		}
	}
	return counts
}
