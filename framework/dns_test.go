package framework

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/miekg/dns"
	"github.com/stretchr/testify/require"
)

// testDNS is a real DNS server on a loopback UDP port, answering A queries from a
// table the test changes as it moves servers: the client's lookups go through the
// network and a resolver as a deployment's would.
type testDNS struct {
	srv  *dns.Server
	addr string

	mu      sync.Mutex
	records map[string][]string // fully qualified name → IPv4 addresses
	queries map[string]int      // A queries per name
}

func startDNS(t *testing.T) *testDNS {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	d := &testDNS{addr: pc.LocalAddr().String(), records: map[string][]string{}, queries: map[string]int{}}
	started := make(chan struct{})
	d.srv = &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(d.answer), NotifyStartedFunc: func() { close(started) }}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = d.srv.ActivateAndServe()
	}()
	<-started
	t.Cleanup(func() {
		_ = d.srv.Shutdown()
		<-served
	})
	return d
}

// set points name at ips; no ips removes it (the server answers NXDOMAIN).
func (d *testDNS) set(name string, ips ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(ips) == 0 {
		delete(d.records, dns.Fqdn(name))
		return
	}
	d.records[dns.Fqdn(name)] = ips
}

func (d *testDNS) lookups(name string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.queries[dns.Fqdn(name)]
}

func (d *testDNS) answer(w dns.ResponseWriter, r *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative = true
	if len(r.Question) == 1 {
		q := r.Question[0]
		name := strings.ToLower(q.Name)
		d.mu.Lock()
		ips, ok := d.records[name]
		if q.Qtype == dns.TypeA {
			d.queries[name]++
		}
		d.mu.Unlock()
		switch {
		case !ok:
			m.Rcode = dns.RcodeNameError
		case q.Qtype == dns.TypeA:
			for _, ip := range ips {
				m.Answer = append(m.Answer, &dns.A{
					Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 0},
					A:   net.ParseIP(ip),
				})
			}
		}
	}
	_ = w.WriteMsg(m)
}

// resolver sends every query to this server.
func (d *testDNS) resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var dialer net.Dialer
		return dialer.DialContext(ctx, "udp", d.addr)
	}}
}
