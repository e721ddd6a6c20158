package framework

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func TestProtectedNames(t *testing.T) {
	const id = "0f8fad5b-d9cb-469f-a165-70867728950e"
	tests := []struct {
		name string
		id   string // "" when the name is not protected
		rest string
	}{
		{"_c_" + id + "-lock-0000000007", id, "lock-0000000007"},
		{"_c_" + id + "-latch-0000000000", id, "latch-0000000000"},
		{"_c_" + id + "-__READ__0000000003", id, "__READ__0000000003"},
		{"_c_" + id + "-x", id, "x"}, // 41 bytes: the shortest protected name
		{"_c_" + id + "--", id, "-"},
		{"_c_" + id + "-_c_" + id + "-lock-", id, "_c_" + id + "-lock-"},
		{"_c_0F8FAD5B-D9CB-469F-A165-70867728950E-lock-0000000007", "0F8FAD5B-D9CB-469F-A165-70867728950E",
			"lock-0000000007"}, // Java's UUID parser accepts upper case
		{"_c_00000000-0000-0000-0000-000000000000-lock-", "00000000-0000-0000-0000-000000000000", "lock-"},

		// Not protected.
		{"", "", ""},
		{"lock-0000000007", "", ""},
		{"_c_", "", ""},
		{"_c_" + id, "", ""},
		{"_c_" + id + "-", "", ""}, // 40 bytes: prefix only
		{"_C_" + id + "-lock-0000000007", "", ""},
		{"c_" + id + "-lock-0000000007", "", ""},
		{"/_c_" + id + "-lock-0000000007", "", ""}, // a path, not a name
		{"_c_" + id + "_lock-0000000007", "", ""},  // byte 39 is not '-'
		{"_c_" + strings.Replace(id, "d", "g", 1) + "-lock-0000000007", "", ""},
		{"_c_" + strings.Replace(id, "-", "x", 1) + "-lock-0000000007", "", ""},
		{"_c_" + strings.Replace(id, "a", "é", 1)[:36] + "-lock-0000000007", "", ""},
		{"_c_{0f8fad5b-d9cb-469f-a165-708677289}-lock-0000000007", "", ""},
		{"_c_urn:uuid:0f8fad5b-d9cb-469f-a165-70-lock-0000000007", "", ""},
		// go-zookeeper's CreateProtectedEphemeralSequential: "_c_" + 32 hex digits + "-".
		{"_c_0f8fad5bd9cb469fa16570867728950e-lock-0000000007", "", ""},
		{"_c_0f8fad5bd9cb469fa16570867728950e-abc-0000000007", "", ""}, // byte 39 is '-'
		{"_c_0f8fad5bd9cb469fa16570867728950e-x", "", ""},
	}
	for _, tt := range tests {
		protected := tt.id != ""
		require.Equal(t, protected, IsProtectedName(tt.name), "IsProtectedName(%q)", tt.name)

		gotID, ok := ProtectedID(tt.name)
		require.Equal(t, protected, ok, "ProtectedID(%q)", tt.name)
		require.Equal(t, tt.id, gotID, "ProtectedID(%q)", tt.name)

		want := tt.name
		if protected {
			want = tt.rest
		}
		require.Equal(t, want, StripProtection(tt.name), "StripProtection(%q)", tt.name)
	}
	require.Equal(t, 40, protectedPrefixLen)
}

func TestProtectedNameRoundTrip(t *testing.T) {
	seen := map[string]bool{}
	for i := range 100 {
		parent := []string{"/", "/a/b"}[i%2]
		anyoneReads := i%3 == 0
		p, id := protectedPath(parent, "lock-", anyoneReads)
		require.Equal(t, joinPath(parent, protectedName(id, "lock-")), p)
		require.Len(t, id, 36)
		require.Equal(t, strings.ToLower(id), id, "Curator writes lower case")
		u, err := uuid.Parse(id)
		require.NoError(t, err)
		version := uuid.Version(4)
		if anyoneReads {
			version = 8
		}
		require.Equal(t, version, u.Version(), id)
		require.Equal(t, uuid.RFC4122, u.Variant(), id)
		require.Equal(t, anyoneReads, saysAnyoneReads(protectedName(id, "lock-0000000001")), id)
		require.False(t, seen[id], "ids repeat")
		seen[id] = true

		for _, base := range []string{"lock-", "read-", "__WRIT__", "lease-", "a"} {
			name := protectedName(id, base)
			require.Len(t, name, 40+len(base))
			require.True(t, IsProtectedName(name), name)
			// As the server appends a sequence to it.
			seq := name + "0000000042"
			gotID, ok := ProtectedID(seq)
			require.True(t, ok, seq)
			require.Equal(t, id, gotID)
			require.Equal(t, base+"0000000042", StripProtection(seq))
			// The recovery after a lost create matches children by this prefix.
			require.True(t, strings.HasPrefix(seq, protectedName(id, "")))
		}
		require.False(t, IsProtectedName(protectedName(id, "")), "prefix alone is not a node name")
	}
}

// A protected create's path and id are one allocation: every lock's acquisition
// makes one (a UUID, its text, the name and the path were four).
func TestProtectedPathIsOneAllocation(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	require.Equal(t, 1.0, testing.AllocsPerRun(100, func() { _, _ = protectedPath("/locks/a", "lock-", true) }))
}

// A protected node's id says whether the ACL it was made with lets anyone read it,
// the ACL the server holds: so a waiter behind it may watch it with no read
// (Plumbing.WatchDataSince).
func TestAProtectedIDSaysWhetherAnyoneReads(t *testing.T) {
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()}, WithAuth("digest", []byte("alice:secret")))
	for _, tt := range []struct {
		acl         []ACL
		anyoneReads bool
	}{
		{WorldACL(PermAll), true},
		{WorldACL(PermRead), true},
		{append(AuthACL(PermAll), WorldACL(PermRead)...), true},
		{WorldACL(PermWrite | PermAdmin), false}, // ADMIN: GetACL needs it without READ
		{AuthACL(PermAll), false},
	} {
		p, err := c.Create(ctx, "/protected-ids/lock-", nil, Protected(), Ephemeral(), Sequential(),
			CreatingParentContainers(), WithNodeACL(tt.acl...))
		require.NoError(t, err)
		acl, _, err := c.GetACL(ctx, p)
		require.NoError(t, err)
		require.Equal(t, tt.anyoneReads, anyoneReads(acl), "the server's ACL")
		require.Equal(t, tt.anyoneReads, saysAnyoneReads(baseName(p)), "%s made with %v", p, tt.acl)
	}
}
