package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

// alice is the identity the ACL tests authenticate as.
var alice = framework.DigestACL(framework.PermAll, "alice", "secret")

// aliceClient is a client with alice's credentials: reading an ACL needs READ, and
// the server shows a digest's hash only to a client with ADMIN on the node.
func (h *harness) aliceClient() *framework.Client {
	return zkrtest.Client(h.t, []string{h.servers}, framework.WithAuth("digest", []byte("alice:secret")))
}

// With credentials and no --acl, every node zkr creates for a lock (the lock's
// parents and our node) is its creator's: a client without the credentials can
// neither delete the holder's node nor enter the queue.
func TestLockNodesAreTheCreators(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	holder := h.start("--auth", "digest:alice:secret", "lock", "/locks/job")
	waitOutput(t, &holder.stdout, "/locks/job/_c_")
	node := strings.TrimSpace(holder.stdout.String())
	admin := h.aliceClient()
	for _, p := range []string{"/locks", "/locks/job", node} {
		acl, _, err := admin.GetACL(testCtx(t), p)
		require.NoError(t, err, p)
		require.Equal(t, alice, acl, p)
	}
	require.ErrorIs(t, h.client.Delete(testCtx(t), node, -1), framework.ErrNoAuth)
	_, err := h.client.Create(testCtx(t), "/locks/job/intruder", nil)
	require.ErrorIs(t, err, framework.ErrNoAuth)
}

// --acl says what zkr's nodes get: world (open, Curator's default), or a list.
func TestACLFlag(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	env := []string{"ZK_SERVERS=" + h.servers}
	admin := h.aliceClient()
	aliceAndReaders := append(framework.DigestACL(framework.PermAll, "alice", "secret"), framework.WorldACL(framework.PermRead)...)
	for _, tc := range []struct {
		acl  string
		want []framework.ACL
	}{
		{"world", framework.WorldACL(framework.PermAll)},
		{"creator,world:anyone:r", aliceAndReaders},
		{"digest:" + alice[0].ID + ":cdrwa, world:anyone:r", aliceAndReaders},
	} {
		p := "/acl/" + strings.NewReplacer(":", "_", ",", "_", " ", "").Replace(tc.acl)
		code, _, stderr := runZkr(t, env, "--auth", "digest:alice:secret", "--acl", tc.acl, "create", "-p", p, "data")
		require.Equal(t, 0, code, stderr)
		acl, _, err := admin.GetACL(testCtx(t), p)
		require.NoError(t, err)
		require.Equal(t, tc.want, acl, tc.acl)
	}
	// Without credentials the library's default: open to all.
	code, _, stderr := runZkr(t, env, "create", "/open")
	require.Equal(t, 0, code, stderr)
	acl, _, err := h.client.GetACL(testCtx(t), "/open")
	require.NoError(t, err)
	require.Equal(t, framework.WorldACL(framework.PermAll), acl)

	for _, bad := range []string{"creator", "digest:alice", "world:anyone:rx", "nobody"} {
		code, _, stderr := runZkr(t, env, "--acl", bad, "create", "/bad")
		require.Equal(t, exitUsage, code, bad)
		require.Contains(t, stderr, "--acl", bad)
	}
	require.Empty(t, zkrtest.Children(t, h.client, "/bad"))
}
