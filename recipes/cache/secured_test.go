package cache

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// On a server that enforces authentication, a cache follows its tree through a cut
// connection and an expired session: on each new connection the client's watches
// are set again only once its credentials have been accepted (issue 47; before, the
// persistent watch was refused, ended, and the cache went silent).
func TestACacheFollowsThroughACutAndAnExpiryWhereAuthIsEnforced(t *testing.T) {
	srv := zktest.NewServer(t, zktest.WithConfig("enforce.auth.enabled=true", "enforce.auth.schemes=digest"))
	proxy := zktest.NewProxy(t, srv.Addr())
	auth := framework.WithAuth("digest", []byte("user:secret"))
	writer := newClient(t, []string{srv.Addr()}, auth)
	c := newClient(t, []string{proxy.Addr()}, auth, framework.WithSessionTimeout(2*time.Second))
	create(t, writer, "/f", "")
	ca, h := started(t, c, "/f")

	n := len(h.get())
	proxy.Cut()
	h.waitFor(t, n, Suspended)
	create(t, writer, "/f/while-cut", "")
	proxy.Restore()
	h.waitFor(t, n, Synced)
	n = len(h.get())
	create(t, writer, "/f/after-cut", "")
	h.waitEvents(t, n, "Created /f/after-cut")

	n = len(h.get())
	require.NoError(t, proxy.ExpireSession(testCtx(t), c.NegotiatedSessionTimeout()))
	h.waitFor(t, h.waitFor(t, n, Lost), Synced)
	n = len(h.get())
	create(t, writer, "/f/after-expiry", "")
	h.waitEvents(t, n, "Created /f/after-expiry")
	requireConverges(t, ca, writer, math.MaxInt, true)
	h.requireClean(t)
}
