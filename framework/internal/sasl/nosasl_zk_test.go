package sasl

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// A server without SASL (no JAAS Server section) answers a sasl request with an empty
// token: both mechanisms say it runs no SASL.
func TestExchangeWithAServerWithoutSASL(t *testing.T) {
	srv := zktest.NewServer(t)
	digest, err := NewDigestMD5("alice", "secret")
	require.NoError(t, err)
	kc, err := kerberosClient(t, zktest.KDCClientPrincipal, sharedKDC(t).ClientKeytab())
	require.NoError(t, err)
	gss, err := NewGSSAPI(kc, "", "localhost")
	require.NoError(t, err)
	for _, mech := range []Mechanism{digest.Mechanism(), gss.Mechanism()} {
		z := dialSession(t, srv.Addr())
		err := Exchange(bounded(t), mech, z.send)
		require.ErrorIs(t, err, ErrNoSASL, mech.Name())
	}
}
