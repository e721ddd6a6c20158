package sasl

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zkrecipes/zkrecipes/zktest"
)

func TestDigestMD5AgainstServer(t *testing.T) {
	srv := zktest.NewServer(t, zktest.WithSASLDigest("alice", "secret"))

	t.Run("login", func(t *testing.T) {
		ctx := bounded(t)
		z := dialSession(t, srv.Addr())
		creds, err := NewDigestMD5("alice", "secret")
		require.NoError(t, err)
		require.NoError(t, Exchange(ctx, creds.Mechanism(), z.send))
		code, err := z.create(ctx, "/digest")
		require.NoError(t, err)
		require.Zero(t, code)
	})
	t.Run("wrong password", func(t *testing.T) {
		ctx := bounded(t)
		z := dialSession(t, srv.Addr())
		creds, err := NewDigestMD5("alice", "wrong")
		require.NoError(t, err)
		err = Exchange(ctx, creds.Mechanism(), z.send)
		require.ErrorIs(t, err, ErrRefused)
		require.ErrorContains(t, err, "DIGEST-MD5, round trip 2")
	})
	t.Run("no login", func(t *testing.T) {
		ctx := bounded(t)
		z := dialSession(t, srv.Addr())
		code, err := z.create(ctx, "/plain")
		require.NoError(t, err)
		require.EqualValues(t, errRequiresAuth, code)
	})
}
