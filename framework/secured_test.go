package framework

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/zktest"
)

// A server that refuses the client's credentials (a scheme it has no provider for
// answers "auth failed", -115) is named by the wait for a connection: what was
// refused, and ErrAuthFailed, instead of a timeout alone.
func TestRefusedCredentialsAreNamedByWaitConnected(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t, zktest.WithConfig("enforce.auth.enabled=true", "enforce.auth.schemes=digest"))
	c, err := New([]string{srv.Addr()}, WithAuth("nosuchscheme", []byte("user:secret")),
		WithConnectionTimeout(2*time.Second))
	require.NoError(t, err)
	defer c.Close()
	err = c.WaitConnected(context.Background())
	var ce *ConnectError
	require.ErrorAs(t, err, &ce)
	require.ErrorIs(t, err, ErrAuthFailed)
	require.ErrorContains(t, err, `refused the client's "nosuchscheme" credentials (ZooKeeper's -115)`)
}
