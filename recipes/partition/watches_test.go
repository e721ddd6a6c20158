package partition

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
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
	for session, w := range perSession {
		// The group: its children and each member's node (ours included, which the
		// persistent node also watches).
		require.LessOrEqual(t, w.group, len(members)+2, "session %s: %s", session, out)
		// No item's queue, and no lock but of the items this member took for its own:
		// its held nodes, one watch each (a holder hears its node's deletion), and
		// one-shot watches on the node ahead, left until that node goes by queues
		// given up as the member's view caught up (8 seen at most) — each at most its
		// share of the items, together fewer than every item.
		require.Zero(t, w.queues, "session %s watches items' queues: %s", session, out)
		require.LessOrEqual(t, w.locks, 2*len(items)/len(members), "session %s: %s", session, out)
	}
}

// watches are one session's watched paths, by kind.
type watches struct{ group, queues, locks int }

// watchesPerSession counts the paths wchc lists under each session, by kind.
func watchesPerSession(wchc string) map[string]*watches {
	counts := map[string]*watches{}
	for session, paths := range zkrtest.WatchesBySession(wchc) {
		w := &watches{}
		counts[session] = w
		for _, p := range paths {
			switch {
			case strings.HasPrefix(p, "/work/members"):
				w.group++
			case strings.Count(p, "/") == 3: // /work/items/<item>
				w.queues++
			default:
				w.locks++
			}
		}
	}
	return counts
}
