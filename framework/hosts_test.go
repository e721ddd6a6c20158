package framework

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// provider is a hostProvider over servers in the order given, resolving through d,
// logging into the buffer returned.
func provider(t *testing.T, d *testDNS, servers ...string) (*hostProvider, *bytes.Buffer) {
	var logs bytes.Buffer
	hs := newHosts(servers, d.resolver(), slog.New(slog.NewTextHandler(&logs, nil)), 5*time.Second)
	hs.servers = servers // unshuffled, so the test knows the order
	return &hostProvider{hosts: hs, ctx: testCtx(t)}, &logs
}

func TestHostProviderYieldsEveryAddressThenLooksUpAgain(t *testing.T) {
	d := startDNS(t)
	d.set("multi.test", "127.0.0.5", "127.0.0.6")
	p, _ := provider(t, d, "multi.test:2181")

	a, retry := p.Next()
	require.False(t, retry)
	b, retry := p.Next()
	require.False(t, retry, "the second address of the same name is the same pass")
	require.ElementsMatch(t, []string{"127.0.0.5:2181", "127.0.0.6:2181"}, []string{a, b})
	require.Equal(t, 1, d.lookups("multi.test"), "one lookup for both addresses")
	require.Equal(t, "multi.test", p.target(b).host, "TLS checks the name, not the address")

	d.set("multi.test", "127.0.0.7")
	c, retry := p.Next()
	require.True(t, retry, "a whole pass without a connection")
	require.Equal(t, "127.0.0.7:2181", c, "the next pass looks the name up again")
	require.Equal(t, 2, d.lookups("multi.test"))
}

func TestHostProviderConnectedForgetsTheRestOfAName(t *testing.T) {
	d := startDNS(t)
	d.set("multi.test", "127.0.0.5", "127.0.0.6")
	p, _ := provider(t, d, "multi.test:2181")
	p.Next()
	p.Connected()
	d.set("multi.test", "127.0.0.8")
	a, retry := p.Next()
	require.False(t, retry)
	require.Equal(t, "127.0.0.8:2181", a, "the next connection looks the name up anew")
}

func TestHostProviderSkipsANameThatDoesNotResolveAndSaysSoOncePerChange(t *testing.T) {
	d := startDNS(t)
	d.set("up.test", "127.0.0.9")
	p, logs := provider(t, d, "gone.test:2181", "up.test:2182")
	warnings := func() int { return strings.Count(logs.String(), "does not resolve") }

	for range 3 { // three passes
		gone, _ := p.Next()
		to := p.target(gone)
		require.Error(t, to.err)
		require.ErrorContains(t, to.err, "gone.test")
		var dnsErr *net.DNSError
		require.ErrorAs(t, to.err, &dnsErr)
		up, _ := p.Next()
		require.Equal(t, "127.0.0.9:2182", up)
		require.NoError(t, p.target(up).err)
	}
	require.Equal(t, 1, warnings(), "one warning however often it is retried:\n%s", logs)

	d.set("gone.test", "127.0.0.10")
	back, _ := p.Next()
	require.Equal(t, "127.0.0.10:2181", back)
	require.Contains(t, logs.String(), "resolves to new addresses")
	p.Next()

	d.set("gone.test")
	p.Next()
	require.Equal(t, 2, warnings(), "a name that stops resolving again is a change:\n%s", logs)
}

func TestHostProviderLookupEndsWithTheHandle(t *testing.T) {
	// A DNS server that never answers: the lookup must end when the handle closes,
	// not after the bound (an hour here).
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	defer pc.Close()
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var dialer net.Dialer
		return dialer.DialContext(ctx, "udp", pc.LocalAddr().String())
	}}
	ctx, cancel := context.WithCancel(context.Background())
	p := &hostProvider{hosts: newHosts([]string{"silent.test:2181"}, r, slog.New(slog.DiscardHandler), time.Hour), ctx: ctx}
	done := make(chan string)
	go func() { addr, _ := p.Next(); done <- addr }()
	cancel()
	select {
	case addr := <-done:
		require.ErrorIs(t, p.target(addr).err, context.Canceled)
	case <-time.After(wait):
		t.Fatal("the lookup outlived its handle")
	}
}

func TestWithResolverRefusesNil(t *testing.T) {
	_, err := New([]string{"127.0.0.1:2181"}, WithResolver(nil))
	require.ErrorIs(t, err, ErrInvalidOption)
	require.ErrorContains(t, err, "nil resolver")
}
