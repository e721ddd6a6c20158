package sasl

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/credentials"
	"github.com/stretchr/testify/require"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// A client whose only credential is a ticket cache (kinit's) whose ticket has
// expired cannot get a service ticket, and says so before it sends anything.
func TestGSSAPIExpiredTicket(t *testing.T) {
	t.Parallel() // most of it is waiting for the ticket to expire
	kdc := sharedKDC(t)
	ccache := filepath.Join(t.TempDir(), "ccache")
	kinit := exec.Command("kinit", "-l", "1s", "-k", "-t", kdc.ClientKeytab(), zktest.KDCClientPrincipal+"@"+zktest.KDCRealm)
	kinit.Env = append(os.Environ(), "KRB5_CONFIG="+kdc.Krb5Conf(), "KRB5CCNAME=FILE:"+ccache)
	out, err := kinit.CombinedOutput()
	require.NoError(t, err, "%s", out)
	cc, err := credentials.LoadCCache(ccache)
	require.NoError(t, err)
	var end time.Time
	for _, c := range cc.GetEntries() {
		end = c.EndTime
	}
	require.False(t, end.IsZero(), "no ticket in the cache")
	// The ticket's end is a time, not an event: wait for the clock to pass it.
	select {
	case <-time.After(time.Until(end) + 10*time.Millisecond):
	case <-bounded(t).Done():
		t.Fatal("the ticket did not expire")
	}

	cfg, err := config.Load(kdc.Krb5Conf())
	require.NoError(t, err)
	kc, err := client.NewFromCCache(cc, cfg, client.DisablePAFXFAST(true))
	require.NoError(t, err) // gokrb5 takes the cache as it is, and finds out when asked
	t.Cleanup(kc.Destroy)
	creds, err := NewGSSAPI(kc, "", "localhost")
	require.NoError(t, err)
	err = Exchange(bounded(t), creds.Mechanism(), func(context.Context, []byte) ([]byte, error) {
		t.Fatal("a token was sent without a ticket")
		return nil, nil
	})
	require.ErrorContains(t, err, "sasl: GSSAPI: no Kerberos ticket to zookeeper/localhost")
	require.ErrorContains(t, err, "no valid existing session")
}
