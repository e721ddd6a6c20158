package main

import (
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// Unless told, zkr asks for the session timeout a program on the library asks for
// (framework.New's default): on a server whose range clamps neither, the server
// grants zkr's session what it grants the library's, and zkr's help names it.
func TestSessionTimeoutIsTheLibrarys(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t, zktest.WithSessionTimeouts(time.Second, 10*time.Minute))
	ctx := testCtx(t)
	lib, err := framework.New([]string{srv.Addr()}) // no options: the library's defaults
	require.NoError(t, err)
	t.Cleanup(func() { _ = lib.Close() })
	require.NoError(t, lib.WaitConnected(ctx))
	require.Equal(t, lib.SessionTimeout(), lib.NegotiatedSessionTimeout(), "the server clamped the library's default")
	require.Equal(t, defaultSessionTimeout, lib.SessionTimeout())

	z := startZkr(t, []string{"ZK_SERVERS=" + srv.Addr()}, "lock", "/session-timeout")
	waitOutput(t, &z.stdout, "/session-timeout/_c_")
	node := strings.TrimSpace(z.stdout.String())
	_, st, err := zkrtest.Client(t, []string{srv.Addr()}).Get(ctx, node)
	require.NoError(t, err)
	// The server's connections, each with its session and the timeout granted.
	cons, err := srv.FourLetter(ctx, "cons")
	require.NoError(t, err)
	m := regexp.MustCompile(fmt.Sprintf(`sid=%#x,[^)]*\bto=(\d+)`, st.EphemeralOwner)).FindStringSubmatch(cons)
	require.NotNil(t, m, "zkr's session %#x in cons:\n%s", st.EphemeralOwner, cons)
	require.Equal(t, fmt.Sprint(lib.NegotiatedSessionTimeout().Milliseconds()), m[1])
	z.signal(syscall.SIGTERM)
	require.Equal(t, 0, z.wait())

	_, help, _ := runZkr(t, nil, "help")
	require.Contains(t, help, fmt.Sprintf("(default %gs)", lib.SessionTimeout().Seconds()))
}
