package zktest_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"strings"
	"time"

	"github.com/zkrecipes/zkrecipes/zktest"
)

// In a test, zktest.NewServer(t) does the same and stops the server at the end.
func ExampleStartServer() {
	ctx := context.Background()
	srv, err := zktest.StartServer(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	answer, err := srv.FourLetter(ctx, "ruok")
	fmt.Println(answer, err)
	// Output: imok <nil>
}

// A client of the secure port trusts the server with ClientTLSConfig; with zkrecipes,
// framework.New([]string{srv.SecureAddr()}, framework.WithTLS(srv.ClientTLSConfig())).
func ExampleWithTLS() {
	srv, err := zktest.StartServer(context.Background(), zktest.WithTLS())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	conn, err := tls.Dial("tcp", srv.SecureAddr(), srv.ClientTLSConfig())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	fmt.Println("server certificate verified for", conn.ConnectionState().PeerCertificates[0].Subject.CommonName)
	// Output: server certificate verified for localhost
}

func ExampleStartEnsemble() {
	e, err := zktest.StartEnsemble(context.Background(), 3)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close()
	fmt.Println(len(e.Addrs()), "servers; one leads:", e.Leader() >= 0)
	// Output: 3 servers; one leads: true
}

func ExampleEnsemble_SecureAddrs() {
	e, err := zktest.StartEnsemble(context.Background(), 3, zktest.WithTLS())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close()
	cfg := e.ClientTLSConfig() // one authority signs every member's certificate
	for i, addr := range e.SecureAddrs() {
		conn, err := tls.Dial("tcp", addr, cfg)
		if err == nil {
			conn.Close()
		}
		fmt.Println("member", i, err)
	}
	// Output:
	// member 0 <nil>
	// member 1 <nil>
	// member 2 <nil>
}

func ExampleProxy() {
	ctx := context.Background()
	srv, err := zktest.StartServer(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	proxy, err := zktest.StartProxy(srv.Addr())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer proxy.Close()

	srvr, err := zktest.FourLetter(ctx, proxy.Addr(), "srvr")
	fmt.Println(strings.Contains(srvr, "Mode: standalone"), err)
	proxy.Cut() // every connection through the proxy drops, and new ones are refused
	_, err = zktest.FourLetter(ctx, proxy.Addr(), "srvr")
	fmt.Println(err != nil)
	proxy.Restore()
	// Output:
	// true <nil>
	// true
}

// With mutual TLS the secure port wants the client's certificate too: ClientCertPEM
// is one it accepts (zkr takes the two PEM files as --tls-cert and --tls-key).
func ExampleWithClientAuth() {
	srv, err := zktest.StartServer(context.Background(), zktest.WithClientAuth())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	certPEM, keyPEM := srv.ClientCertPEM()
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg := srv.ClientTLSConfig()
	cfg.Certificates = []tls.Certificate{cert}
	conn, err := tls.Dial("tcp", srv.SecureAddr(), cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	fmt.Println("accepted:", len(conn.ConnectionState().PeerCertificates) > 0)
	// Output: accepted: true
}

// Cut the leader off from the other two: they elect one of themselves, while the
// isolated member stops serving its clients until Heal.
func ExampleEnsemble_Isolate() {
	e, err := zktest.StartEnsemble(context.Background(), 3)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close()
	old := e.Leader()
	e.Isolate(old)
	deadline := time.Now().Add(time.Minute)
	for l := e.Leader(); (l < 0 || l == old) && time.Now().Before(deadline); l = e.Leader() {
		time.Sleep(20 * time.Millisecond) // an election takes a fraction of a second
	}
	fmt.Println("a new leader:", e.Leader() != old)
	fmt.Println(e.Heal())
	// Output:
	// a new leader: true
	// <nil>
}

// WithZooKeeper chooses the version ("3.8" for the newest 3.8.x installed); Version
// says what the server itself reports, so the test knows what it ran against.
func ExampleWithZooKeeper() {
	oldest := zktest.InstalledVersions()[len(zktest.InstalledVersions())-1]
	major, minor, _ := strings.Cut(oldest, ".")
	minor, _, _ = strings.Cut(minor, ".")
	srv, err := zktest.StartServer(context.Background(), zktest.WithZooKeeper(major+"."+minor))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	fmt.Println(srv.Version() == oldest)
	// Output: true
}

// A Kerberos-only server: its members log in to the KDC with its keytab, and a client
// logs in as zktest.KDCClientPrincipal with kdc.ClientKeytab() and kdc.Krb5Conf().
func ExampleWithKerberos() {
	ctx := context.Background()
	kdc, err := zktest.StartKDC(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer kdc.Close()
	srv, err := zktest.StartServer(ctx, zktest.WithKerberos(kdc))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	fmt.Println("realm", zktest.KDCRealm, "server principal", zktest.KDCServerPrincipal)
	// Output: realm ZKR.TEST server principal zookeeper/localhost
}
