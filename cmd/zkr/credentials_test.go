package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
)

// Credentials come from $ZK_AUTH or from --auth-file as well as from --auth (which
// ps shows every local user): each opens a node only alice may read, and makes
// nodes that are alice's.
func TestCredentialsFromTheEnvironmentAndAFile(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	admin := h.aliceClient()
	_, err := admin.Create(testCtx(t), "/private", []byte("s3"), framework.WithNodeACL(alice...))
	require.NoError(t, err)
	env := []string{"ZK_SERVERS=" + h.servers}

	code, _, _ := runZkr(t, env, "get", "/private")
	require.Equal(t, exitNoPerm, code, "no credentials")

	file := filepath.Join(h.dir, "auth")
	require.NoError(t, os.WriteFile(file, []byte("# alice\n\ndigest:alice:secret\n"), 0o600))
	for name, tc := range map[string]struct {
		env  []string
		args []string
	}{
		"ZK_AUTH":     {append(env, "ZK_AUTH=digest:alice:secret"), nil},
		"--auth-file": {env, []string{"--auth-file", file}},
	} {
		code, stdout, stderr := runZkr(t, tc.env, append(tc.args, "get", "/private")...)
		require.Equal(t, 0, code, name+": "+stderr)
		require.Equal(t, "s3", stdout, name)

		p := "/mine-" + name
		code, _, stderr = runZkr(t, tc.env, append(tc.args, "create", p)...)
		require.Equal(t, 0, code, name+": "+stderr)
		acl, _, err := admin.GetACL(testCtx(t), p)
		require.NoError(t, err)
		require.Equal(t, alice, acl, name)
	}
}

// zkr refuses a credentials file that other users can read or change, and a line
// it cannot read, without quoting the secrets.
func TestAuthFileRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	env := []string{"ZK_SERVERS=" + h.servers}
	for name, tc := range map[string]struct {
		mode    os.FileMode
		content string
		says    string
	}{
		"readable by others":  {0o644, "digest:alice:secret\n", "chmod 600"},
		"writable by a group": {0o660, "digest:alice:secret\n", "chmod 600"},
		"not a credential":    {0o600, "alice-secret\n", "line 1: want scheme:credentials"},
		"empty":               {0o600, "# nothing\n", "no credentials"},
	} {
		file := filepath.Join(h.dir, name)
		require.NoError(t, os.WriteFile(file, []byte(tc.content), 0o600))
		require.NoError(t, os.Chmod(file, tc.mode))
		code, _, stderr := runZkr(t, env, "--auth-file", file, "ls", "/")
		require.Equal(t, exitUsage, code, name)
		require.Contains(t, stderr, tc.says, name)
		require.NotContains(t, stderr, "secret", name)
	}
	// Shared with a group, read-only: accepted.
	file := filepath.Join(h.dir, "group")
	require.NoError(t, os.WriteFile(file, []byte("digest:alice:secret\n"), 0o600))
	require.NoError(t, os.Chmod(file, 0o640))
	code, _, stderr := runZkr(t, env, "--auth-file", file, "ls", "/")
	require.Equal(t, 0, code, stderr)
}
