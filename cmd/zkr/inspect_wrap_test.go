package main

import (
	"encoding/json"
	"fmt"
	"path"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/recipes/mutex"
	"github.com/zkrecipes/zkrecipes/recipes/rwlock"
)

// After the server's sequence counter wraps past 2147483647, zkr inspect names the
// holder the library granted: the recipes' own Participants, which decide as their
// lock queue does. A real wrap takes 2^31 creates and deletes under one path, too
// many for a test, so the nodes are made with the names the server writes around
// it (%010d of an int32: "2147483647", then "-2147483648", "-2147483647").
func TestInspectAgreesWithTheLibraryPastTheWrap(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := testCtx(t)
	env := []string{"ZK_SERVERS=" + h.servers}
	make := func(dir string, nodes ...string) {
		t.Helper()
		_, err := h.client.Create(ctx, dir, nil)
		require.NoError(t, err)
		for i, n := range nodes {
			name := fmt.Sprintf("_c_%08d-d9cb-469f-a165-70867728950e-%s", i, n)
			_, err := h.client.Create(ctx, path.Join(dir, name), []byte(n))
			require.NoError(t, err)
		}
	}
	inspect := func(p string) map[string]string {
		t.Helper()
		code, stdout, stderr := runZkr(t, env, "inspect", p, "--json")
		require.Equal(t, 0, code, stderr)
		var q queue
		require.NoError(t, json.Unmarshal([]byte(stdout), &q), stdout)
		states := map[string]string{}
		for _, p := range q.Participants {
			states[p.ID] = p.State
		}
		return states
	}

	// The oldest node, made just before the wrap, holds; text order would put the
	// newest first.
	make("/wrap-mutex", "lock-2147483646", "lock-2147483647", "lock--2147483648", "lock--2147483647")
	m, err := mutex.New(h.client, "/wrap-mutex")
	require.NoError(t, err)
	lib, err := m.Participants(ctx)
	require.NoError(t, err)
	require.True(t, lib[0].Holder)
	require.Equal(t, "lock-2147483646", string(lib[0].ID))
	require.Equal(t, map[string]string{"lock-2147483646": stateHolder, "lock-2147483647": stateWaiting,
		"lock--2147483648": stateWaiting, "lock--2147483647": stateWaiting}, inspect("/wrap-mutex"))

	// A reader from before the wrap holds; the writer after it waits, and so does
	// the reader behind the writer.
	make("/wrap-rw", "read-2147483647", "write--2147483648", "read--2147483647")
	rw, err := rwlock.New(h.client, "/wrap-rw")
	require.NoError(t, err)
	holders := map[string]string{}
	for _, side := range []*rwlock.Lock{rw.ReadLock(), rw.WriteLock()} {
		lib, err = side.Participants(ctx)
		require.NoError(t, err)
		for _, p := range lib {
			holders[p.ID] = map[bool]string{true: stateHolder, false: stateWaiting}[p.Holder]
		}
	}
	require.Equal(t, map[string]string{"read-2147483647": stateHolder, "write--2147483648": stateWaiting,
		"read--2147483647": stateWaiting}, holders)
	require.Equal(t, holders, inspect("/wrap-rw"))

	// A sequence the server never writes (eleven digits) is no participant.
	make("/wrap-strange", "lock-00000000001", "lock-0000000002")
	require.Equal(t, map[string]string{"lock-0000000002": stateHolder}, inspect("/wrap-strange"))
}
