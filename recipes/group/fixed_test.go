package group

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// joinFixed starts a FixedPayload member on a client of its own, left at the end of
// the test; it returns the member and its client.
// FixedPayload saves watches on one-shot watches only (a server before 3.6, or
// framework.WithOneShotWatches): on a persistent watch a group has one whatever its
// size. These tests run on one-shot watches.
func joinFixed(t *testing.T, srv *zktest.Server, path, id, payload string) (*Member, *framework.Client) {
	t.Helper()
	c := newClient(t, []string{srv.Addr()}, framework.WithOneShotWatches())
	m, err := New(c, path, id, []byte(payload), FixedPayload())
	require.NoError(t, err)
	require.NoError(t, m.Start(testCtx(t)))
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	return m, c
}

// Each FixedPayload member's session holds 2 data watches whatever the group's size
// (the group's node and its own), where a member without the option holds M + 1:
// one on every member's node (issue 28).
func TestFixedPayloadMembersWatchNoOtherMember(t *testing.T) {
	srv := zktest.NewServer(t)
	eachWatchesTheGroupAndItself(t, srv, "/groups/fixed", func(id, payload string) (*Member, *framework.Client) {
		return joinFixed(t, srv, "/groups/fixed", id, payload)
	})
}

// On a persistent watch (the server's default, from 3.6) each member's session holds
// 2 watches whatever the group's size: the view's recursive one on the group's node
// and its own node's, as the package's doc says.
func TestMembersWatchTwoPathsEach(t *testing.T) {
	srv := zkrtest.Server(t)
	eachWatchesTheGroupAndItself(t, srv, "/groups/watched", func(id, payload string) (*Member, *framework.Client) {
		c := newClient(t, []string{srv.Addr()})
		return join(t, c, "/groups/watched", id, payload), c
	})
}

// eachWatchesTheGroupAndItself joins six members to the group at path with join, and
// requires that each one's session watches two paths: the group's node and its own.
func eachWatchesTheGroupAndItself(t *testing.T, srv *zktest.Server, path string, join func(id, payload string) (*Member, *framework.Client)) {
	t.Helper()
	const size = 6
	var members []*Member
	sessions := map[string]int64{}
	all := map[string]string{}
	for i := range size {
		id := fmt.Sprintf("m%d", i)
		m, c := join(id, "at "+id)
		members, sessions[id], all[id] = append(members, m), c.SessionID(), "at "+id
	}
	allSee(t, all, members...)
	for id, session := range sessions {
		require.Equal(t, []string{path, path + "/" + id}, zkrtest.DataWatches(t, srv, session), id)
	}
}

// ZooKeeper holds a FixedPayload member to its promise: nobody can set its node's
// data or ACL, and SetPayload is refused before anything is sent; the member still
// leaves (its node deleted) at Close.
func TestFixedPayloadCannotChange(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	m, _ := joinFixed(t, srv, "/groups/frozen", "a", "first")
	raw := newClient(t, []string{srv.Addr()})

	err := m.SetPayload(ctx, []byte("second"))
	require.ErrorIs(t, err, ErrFixedPayload)
	require.ErrorContains(t, err, `"a"`)
	_, err = raw.Set(ctx, "/groups/frozen/a", []byte("second"), -1)
	require.ErrorIs(t, err, framework.ErrNoAuth)
	_, err = raw.SetACL(ctx, "/groups/frozen/a", framework.WorldACL(framework.PermAll), -1)
	require.ErrorIs(t, err, framework.ErrNoAuth)
	data, _, err := raw.Get(ctx, "/groups/frozen/a")
	require.NoError(t, err)
	require.Equal(t, "first", string(data))
	sees(t, m, map[string]string{"a": "first"})

	require.NoError(t, m.Close(ctx))
	ok, _, err := raw.Exists(ctx, "/groups/frozen/a")
	require.NoError(t, err)
	require.False(t, ok, "deleted at Close")
}

// A member's node deleted and made again with another payload between two listings
// of the group (one transaction: one notification, the same names) is seen by a
// FixedPayload member, which has no data watch on it: as a leave, then a join.
func TestFixedPayloadMemberSeesANodeMadeAgain(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	a, _ := joinFixed(t, srv, "/groups/again", "a", "pa")
	raw := newClient(t, []string{srv.Addr()})
	readOnly := framework.WithNodePerms(framework.PermRead)
	_, err := raw.Create(ctx, "/groups/again/b", []byte("one"), framework.Ephemeral(), readOnly)
	require.NoError(t, err)
	sees(t, a, map[string]string{"a": "pa", "b": "one"})

	var mu sync.Mutex
	var heard []map[string]string
	stop := a.Listen(func(ms map[string][]byte) {
		s := map[string]string{}
		for id, p := range ms {
			s[id] = string(p)
		}
		mu.Lock()
		heard = append(heard, s)
		mu.Unlock()
	})
	defer stop()
	_, err = raw.Multi(ctx, framework.DeleteOp("/groups/again/b", -1),
		framework.CreateOp("/groups/again/b", []byte("two"), framework.Ephemeral(), readOnly))
	require.NoError(t, err)
	sees(t, a, map[string]string{"a": "pa", "b": "two"})
	// Two changes heard, a leave and a join (Listen gives the members at the time of
	// the call, the new payload already for both).
	eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(heard) == 2
	})
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, map[string]string{"a": "pa", "b": "two"}, heard[1])
}

// In a group of FixedPayload members and members whose payload may change, every
// member sees every payload, changes included, and a FixedPayload member watches
// only the nodes that can change.
func TestMixedGroup(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	a, ca := joinFixed(t, srv, "/groups/mixed", "a", "pa")
	cb := newClient(t, []string{srv.Addr()}, framework.WithOneShotWatches())
	b := join(t, cb, "/groups/mixed", "b", "pb")
	c, _ := joinFixed(t, srv, "/groups/mixed", "c", "pc")
	all := map[string]string{"a": "pa", "b": "pb", "c": "pc"}
	allSee(t, all, a, b, c)

	require.NoError(t, b.SetPayload(ctx, []byte("pb2")))
	all["b"] = "pb2"
	allSee(t, all, a, b, c)
	require.Equal(t, []string{"/groups/mixed", "/groups/mixed/a", "/groups/mixed/b"}, zkrtest.DataWatches(t, srv, ca.SessionID()))
	require.Equal(t, []string{"/groups/mixed", "/groups/mixed/a", "/groups/mixed/b", "/groups/mixed/c"},
		zkrtest.DataWatches(t, srv, cb.SessionID()), "without the option, every member is watched")

	require.NoError(t, c.Close(ctx))
	delete(all, "c")
	allSee(t, all, a, b)
}
