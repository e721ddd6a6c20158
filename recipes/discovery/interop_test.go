package discovery

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

// javaFields is what the peer prints of an instance Curator read: every field, and
// the URI its buildUriSpec makes.
type javaFields struct {
	Name         string            `json:"name"`
	ID           string            `json:"id"`
	Address      string            `json:"address"`
	Port         *int              `json:"port"`
	SSLPort      *int              `json:"sslPort"`
	Payload      map[string]string `json:"payload"`
	PayloadClass string            `json:"payloadClass"`
	Registered   int64             `json:"registrationTimeUTC"`
	ServiceType  string            `json:"serviceType"`
	Enabled      bool              `json:"enabled"`
	URI          string            `json:"uri"`
}

func startPeer(t *testing.T, addr string) *zkrtest.CuratorPeer {
	peer := zkrtest.StartCuratorPeer(t, "discovery", addr, "/services")
	peer.Expect(t, "READY")
	return peer
}

// Java registers; Go reads every field, builds the same URI, and writes the same
// bytes for it.
func TestCuratorRegistersGoReads(t *testing.T) {
	srv := zkrtest.Server(t)
	c := newClient(t, []string{srv.Addr()})
	d := newDiscovery(t, c)
	ctx := testCtx(t)
	peer := startPeer(t, srv.Addr())
	p, h := follow(t, d, "orders")

	peer.Send(t, "register orders java-1 10.0.0.7 8080 8443 {scheme}://{address}:{ssl-port}/api zone=eu-1")
	wrote := strings.TrimPrefix(peer.Expect(t, "REGISTERED "), "REGISTERED ")
	peer.Send(t, "query orders java-1")
	var java javaFields
	require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(peer.Expect(t, "INSTANCE "), "INSTANCE ")), &java))

	in, err := d.Instance(ctx, "orders", "java-1")
	require.NoError(t, err)
	require.Equal(t, Instance{Name: "orders", ID: "java-1", Address: "10.0.0.7", Port: 8080, SSLPort: 8443,
		Payload:    json.RawMessage(`{"@class":"java.util.HashMap","zone":"eu-1"}`),
		Registered: time.UnixMilli(java.Registered).UTC(), Type: Dynamic,
		URISpec: "{scheme}://{address}:{ssl-port}/api"}, in)
	uri, err := in.URI()
	require.NoError(t, err)
	require.Equal(t, java.URI, uri)
	require.Equal(t, "https://10.0.0.7:8443/api", uri)
	ours, err := in.marshal()
	require.NoError(t, err)
	require.Equal(t, wrote, string(ours), "Go writes what Curator writes, byte for byte")

	sees(t, p, "java-1")
	peer.Send(t, "update orders java-1 10.0.0.8")
	peer.Expect(t, "UPDATED")
	require.Eventually(t, func() bool { return p.Instances()[0].Address == "10.0.0.8" }, wait, 10*time.Millisecond)
	peer.Send(t, "unregister orders java-1")
	peer.Expect(t, "UNREGISTERED")
	sees(t, p)
	require.Equal(t, []string{"Added java-1", "Updated java-1", "Removed java-1"}, brief(h.get()))
}

// Go registers; Curator's queryForInstance reads every field, its ServiceProvider
// picks the instance, and its ServiceCache sees Go's update and unregistration.
func TestGoRegistersCuratorReads(t *testing.T) {
	srv := zkrtest.Server(t)
	d := newDiscovery(t, newClient(t, []string{srv.Addr()}))
	ctx := testCtx(t)
	peer := startPeer(t, srv.Addr())
	peer.Send(t, "cache orders")
	require.Equal(t, "CACHE []", peer.Expect(t, "CACHE "))

	in := Instance{Name: "orders", ID: "go-1", Address: "10.0.0.2", Port: 8080, SSLPort: 8443,
		Payload: json.RawMessage(`{"@class":"java.util.HashMap","zone":"eu-2"}`),
		URISpec: "{scheme}://{address}:{port}/{name}"}
	r, err := d.Register(ctx, in)
	require.NoError(t, err)
	defer r.Close(context.Background())
	in = r.Instance()

	peer.Send(t, "query orders go-1")
	var java javaFields
	require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(peer.Expect(t, "INSTANCE "), "INSTANCE ")), &java))
	uri, _ := in.URI()
	require.Equal(t, javaFields{Name: "orders", ID: "go-1", Address: "10.0.0.2", Port: ptr(8080), SSLPort: ptr(8443),
		Payload: map[string]string{"zone": "eu-2"}, PayloadClass: "java.util.HashMap",
		Registered: in.Registered.UnixMilli(), ServiceType: "DYNAMIC", Enabled: true, URI: uri}, java)
	require.Equal(t, "https://10.0.0.2:8080/orders", uri)

	require.Eventually(t, func() bool {
		peer.Send(t, "pick orders")
		return peer.Expect(t, "PICKED ") == "PICKED go-1"
	}, wait, 50*time.Millisecond, "Curator's ServiceProvider picks the Go instance")

	// Curator's ServiceCache sees the update (a disabled instance: its enabled field
	// is read) and the unregistration.
	in.Address, in.Disabled = "10.0.0.3", true
	require.NoError(t, r.Update(ctx, in))
	cacheShows(t, peer, func(all []javaFields) bool {
		return len(all) == 1 && all[0].Address == "10.0.0.3" && !all[0].Enabled
	})
	require.Eventually(t, func() bool {
		peer.Send(t, "pick orders")
		return peer.Expect(t, "PICKED ") == "PICKED null"
	}, wait, 50*time.Millisecond, "Curator's ServiceProvider skips the disabled instance")
	require.NoError(t, r.Close(context.Background()))
	cacheShows(t, peer, func(all []javaFields) bool { return len(all) == 0 })
}

// cacheShows waits for the peer's ServiceCache to report instances that ok accepts.
func cacheShows(t *testing.T, peer *zkrtest.CuratorPeer, ok func([]javaFields) bool) {
	t.Helper()
	for {
		var all []javaFields
		line := peer.Expect(t, "CACHE ")
		require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(line, "CACHE ")), &all))
		if ok(all) {
			return
		}
	}
}

func ptr(n int) *int { return &n }
