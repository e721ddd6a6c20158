package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/zktest"
)

// On a server that requires a SASL login, zkr logs in with DIGEST-MD5 given its
// mechanism and user by flags or the environment and its password by the
// environment or a file; without a login, or with a wrong password, it says what
// the server refused, without quoting the password.
func TestSASLLogin(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t, zktest.WithSASLDigest("alice", "secret"))
	env := []string{"ZK_SERVERS=" + srv.Addr()}
	file := filepath.Join(t.TempDir(), "sasl")
	require.NoError(t, os.WriteFile(file, []byte("# alice's login\nmechanism=DIGEST-MD5\nuser=alice\npassword=secret\n"), 0o600))

	for name, tc := range map[string]struct {
		env  []string
		args []string
	}{
		"flags and ZK_SASL_PASSWORD": {append(env, "ZK_SASL_PASSWORD=secret"), []string{"--sasl-mechanism", "digest-md5", "--sasl-user", "alice"}},
		"ZK_SASL_*":                  {append(env, "ZK_SASL_MECHANISM=DIGEST-MD5", "ZK_SASL_USER=alice", "ZK_SASL_PASSWORD=secret"), nil},
		"--sasl-file":                {env, []string{"--sasl-file", file}},
	} {
		code, _, stderr := runZkr(t, tc.env, append(tc.args, "create", "/by-"+name[:4])...)
		require.Equal(t, 0, code, name+": "+stderr)
	}

	code, _, stderr := runZkr(t, append(env, "ZK_SASL_PASSWORD=wrong"), "--connect-timeout", "2s",
		"--sasl-mechanism", "DIGEST-MD5", "--sasl-user", "alice", "ls", "/")
	require.Equal(t, exitZooKeeper, code, stderr)
	require.Contains(t, stderr, "refused the SASL login")
	require.NotContains(t, stderr, "wrong")

	code, _, stderr = runZkr(t, env, "--connect-timeout", "2s", "ls", "/")
	require.Equal(t, exitNoPerm, code, stderr)
	require.Contains(t, stderr, "zkr ls: /: the server requires authentication: give credentials (--auth, $ZK_AUTH or --auth-file) or a SASL login (--sasl-mechanism")

	code, _, stderr = runZkr(t, env, "--sasl-user", "alice", "ls", "/")
	require.Equal(t, exitUsage, code, stderr)
	require.Contains(t, stderr, "needs --sasl-mechanism")

	require.NoError(t, os.Chmod(file, 0o644))
	code, _, stderr = runZkr(t, env, "--sasl-file", file, "ls", "/")
	require.Equal(t, exitUsage, code, stderr)
	require.Contains(t, stderr, "--sasl-file "+file+": other users can read or change it")
	require.NotContains(t, stderr, "secret")
}
