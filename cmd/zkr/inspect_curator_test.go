package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

// inspect reads Apache Curator's participants as well as ours: a mutex held by the
// Curator peer, with a zkr waiting behind it.
func TestInspectCuratorParticipants(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	java := zkrtest.StartCuratorPeer(t, "mutex", h.servers, "/curator/lock", "java-holder")
	java.Expect(t, "ACQUIRED")
	waiter := h.start("lock", "/curator/lock", "--id", "zkr-waiter", "--", "true")
	h.waitChildren("/curator/lock", 2)

	code, stdout, stderr := runZkr(t, []string{"ZK_SERVERS=" + h.servers}, "inspect", "/curator/lock", "--json")
	require.Equal(t, 0, code, stderr)
	var q queue
	require.NoError(t, json.Unmarshal([]byte(stdout), &q), stdout)
	require.Equal(t, "mutex", q.Recipe)
	require.Len(t, q.Participants, 2)
	require.Equal(t, []string{"java-holder", "holder"}, []string{q.Participants[0].ID, q.Participants[0].State})
	require.Equal(t, []string{"zkr-waiter", "waiting"}, []string{q.Participants[1].ID, q.Participants[1].State})

	java.Send(t, "release")
	java.Expect(t, "RELEASED")
	require.Equal(t, 0, waiter.wait(), "zkr gets the lock Curator gave back")
}
