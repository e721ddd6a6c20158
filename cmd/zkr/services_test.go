package main

import (
	"context"
	"encoding/json"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/recipes/discovery"
)

// zkr services lists each service's instances, for people and as JSON; a node that
// is not an instance is shown with the reason.
func TestServices(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := testCtx(t)
	code, stdout, stderr := runZkr(t, []string{"ZK_SERVERS=" + h.servers}, "services")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "/services: no services\n", stdout)

	d, err := discovery.New(h.client, "/services")
	require.NoError(t, err)
	for _, in := range []discovery.Instance{
		{Name: "orders", ID: "a", Address: "10.0.0.1", Port: 8080},
		{Name: "orders", ID: "b", Address: "10.0.0.2", Port: 8080, SSLPort: 8443, Disabled: true},
		{Name: "users", ID: "c", Address: "10.0.0.3"},
	} {
		r, err := d.Register(ctx, in)
		require.NoError(t, err)
		t.Cleanup(func() { _ = r.Close(context.Background()) })
	}
	_, err = h.client.Create(ctx, "/services/users/junk", []byte("{"), framework.Ephemeral())
	require.NoError(t, err)

	code, stdout, stderr = runZkr(t, []string{"ZK_SERVERS=" + h.servers}, "services")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `^orders \(2\)
  a  10\.0\.0\.1:8080  age \d+s
  b  10\.0\.0\.2:8080  ssl 8443  age \d+s  disabled
users \(2\)
  c  10\.0\.0\.3  age \d+s
  junk  \(not an instance: discovery: node data is not a service instance: .*\)
$`, stdout)

	code, stdout, stderr = runZkr(t, []string{"ZK_SERVERS=" + h.servers}, "services", "/services", "--json")
	require.Equal(t, 0, code, stderr)
	var list serviceList
	require.NoError(t, json.Unmarshal([]byte(stdout), &list))
	require.Len(t, list.Services, 2)
	b := list.Services[0].Instances[1]
	require.Equal(t, "b", b.ID)
	require.True(t, b.Disabled)
	require.Equal(t, "10.0.0.2", b.Address)
	require.Equal(t, 8443, b.SSLPort)

	code, _, stderr = runZkr(t, []string{"ZK_SERVERS=" + h.servers}, "services", "relative")
	require.Equal(t, exitUsage, code)
	require.Contains(t, stderr, "invalid PATH")
}

// --watch prints a line per instance registered, changed or gone.
func TestServicesWatch(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := testCtx(t)
	d, err := discovery.New(h.client, "/services")
	require.NoError(t, err)
	r, err := d.Register(ctx, discovery.Instance{Name: "orders", ID: "a", Address: "10.0.0.1", Port: 80})
	require.NoError(t, err)
	w := h.start("services", "--watch")
	waitOutput(t, &w.stdout, " + orders  a  10.0.0.1:80  age ")

	require.NoError(t, r.Update(ctx, discovery.Instance{Name: "orders", ID: "a", Address: "10.0.0.9", Port: 80}))
	waitOutput(t, &w.stdout, " ~ orders  a  10.0.0.9:80  age ")
	require.NoError(t, r.Close(context.Background()))
	waitOutput(t, &w.stdout, " - orders  a  10.0.0.9:80")
	w.signal(syscall.SIGTERM)
	require.Equal(t, 0, w.wait())
	require.Len(t, strings.Split(strings.TrimSpace(w.stdout.String()), "\n"), 3, "one line per change")
}

// An instance node that cannot be read (an ACL refuses it) is an error that names
// it, as Discovery.Instances returns one: not a service silently listed without it.
func TestServicesUnreadableInstance(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := testCtx(t)
	alice := zkrtest.Client(t, []string{h.servers}, framework.WithAuth("digest", []byte("alice:secret")),
		framework.WithACL(framework.FixedACL(framework.AuthACL(framework.PermAll)...)))
	_, err := h.client.Create(ctx, "/services/orders", nil, framework.CreatingParents())
	require.NoError(t, err)
	data := `{"name":"orders","id":"a","address":"10.0.0.1","port":80,"registrationTimeUTC":1700000000000,"serviceType":"DYNAMIC"}`
	_, err = alice.Create(ctx, "/services/orders/a", []byte(data), framework.Ephemeral())
	require.NoError(t, err)

	code, stdout, stderr := runZkr(t, []string{"ZK_SERVERS=" + h.servers}, "services")
	require.Equal(t, exitNoPerm, code, "stdout: %s\nstderr: %s", stdout, stderr)
	require.Contains(t, stderr, "/services/orders/a")
}
