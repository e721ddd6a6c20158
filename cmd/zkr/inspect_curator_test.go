package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/recipes/group"
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

// inspect reads Apache Curator's GroupMember and SharedCount: a Java member beside a
// Go one, and a count Java set.
func TestInspectCuratorGroupAndCount(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := zkrtest.Context(t)
	java := zkrtest.StartCuratorPeer(t, "group", h.servers, "/curator/group", "java-1", "payload-j")
	java.Expect(t, "READY")
	m, err := group.New(zkrtest.Client(t, []string{h.servers}), "/curator/group", "go-1", []byte("payload-g"))
	require.NoError(t, err)
	require.NoError(t, m.Start(ctx))
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	count := zkrtest.StartCuratorPeer(t, "sharedcount", h.servers, "/curator/count", "3")
	count.Expect(t, "COUNT 3 0")
	count.Send(t, "set 12")
	count.Expect(t, "SET")

	env := []string{"ZK_SERVERS=" + h.servers}
	code, stdout, stderr := runZkr(t, env, "inspect", "/curator/group", "--json")
	require.Equal(t, 0, code, stderr)
	var g groupView
	require.NoError(t, json.Unmarshal([]byte(stdout), &g), stdout)
	require.Equal(t, "group", g.Recipe)
	require.Len(t, g.Members, 2)
	require.Equal(t, []string{"go-1", "payload-g", "java-1", "payload-j"},
		[]string{g.Members[0].ID, *g.Members[0].Payload.Text, g.Members[1].ID, *g.Members[1].Payload.Text})

	code, stdout, stderr = runZkr(t, env, "inspect", "/curator/count", "--as", "count")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "/curator/count: shared count 12, version 1\n", stdout)
}
