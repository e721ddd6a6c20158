package zktest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// serverTLS is a throwaway certificate authority and a server certificate it signed for
// 127.0.0.1, ::1 and localhost. ZooKeeper reads both as PEM files (ssl.keyStore.type=PEM),
// so no keystore tool and no PKCS#12 encoder are needed. ECDSA keys are made in
// microseconds, where RSA would add a noticeable pause to every server's start.
type serverTLS struct {
	ca      *x509.Certificate
	caPEM   []byte // the CA's certificate: ZooKeeper's trust store, and what clients trust
	certPEM []byte // the server's private key (PKCS#8), its certificate, then the CA's
}

func newServerTLS() (*serverTLS, error) {
	now := time.Now()
	ca, caKey, err := newCert(&x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "zktest CA"},
		NotBefore:             now.Add(-time.Hour), // a clock a little behind still accepts it
		NotAfter:              now.AddDate(1, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}, nil, nil)
	if err != nil {
		return nil, err
	}
	cert, key, err := newCert(&x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "localhost"},
		NotBefore:    ca.NotBefore,
		NotAfter:     ca.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		// Client auth too, so that a test may turn on ssl.clientAuth with the same files.
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:    []string{"localhost"},
	}, ca, caKey)
	if err != nil {
		return nil, err
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("zktest: %w", err)
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw})
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})
	certPEM = append(certPEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})...)
	certPEM = append(certPEM, caPEM...)
	return &serverTLS{ca: ca, caPEM: caPEM, certPEM: certPEM}, nil
}

// newCert makes a key and a certificate for it from tmpl, signed by parentKey, or
// by the new key itself when parent is nil.
func newCert(tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("zktest: making a key: %w", err)
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		return nil, nil, fmt.Errorf("zktest: making a certificate for %s: %w", tmpl.Subject.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, fmt.Errorf("zktest: %w", err)
	}
	return cert, key, nil
}

// clientConfig trusts the CA, and nothing else.
func (s *serverTLS) clientConfig() *tls.Config {
	if s == nil {
		return nil
	}
	pool := x509.NewCertPool()
	pool.AddCert(s.ca)
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

func (s *serverTLS) caCertPEM() []byte {
	if s == nil {
		return nil
	}
	return append([]byte(nil), s.caPEM...)
}

// configLines writes the PEM files into dir and returns the zoo.cfg lines that serve
// TLS on securePort. The secure port needs Netty's connection factory (the default NIO
// one has no TLS); the plain port keeps serving, through Netty as well, so readiness
// probes and four-letter words work as without TLS.
func (s *serverTLS) configLines(dir string, securePort int) ([]string, error) {
	keyStore := filepath.Join(dir, "server.pem")
	trustStore := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(keyStore, s.certPEM, 0o600); err != nil {
		return nil, fmt.Errorf("zktest: %w", err)
	}
	if err := os.WriteFile(trustStore, s.caPEM, 0o644); err != nil {
		return nil, fmt.Errorf("zktest: %w", err)
	}
	return []string{
		"secureClientPort=" + fmt.Sprint(securePort),
		"secureClientPortAddress=127.0.0.1",
		"serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory",
		"ssl.keyStore.location=" + keyStore,
		"ssl.keyStore.type=PEM",
		"ssl.trustStore.location=" + trustStore,
		"ssl.trustStore.type=PEM",
		"ssl.clientAuth=none",
	}, nil
}

// tlsServes reports whether the member's secure port completes a TLS handshake, or
// true without TLS. ZooKeeper opens that port after the plain one, whose answer to
// srvr alone does not say the secure port is ready. Until the port is bound, the
// probe is refused at once; once bound, it answers, but a cold JVM's first handshake
// is slow on a busy machine (seconds), so the probe has all of ctx: a shorter limit
// would only start the handshake again.
func (m *member) tlsServes(ctx context.Context) bool {
	if m.tls == nil {
		return true
	}
	d := tls.Dialer{Config: m.tls.clientConfig()}
	conn, err := d.DialContext(ctx, "tcp", m.secureAddr())
	if err != nil {
		return false
	}
	_ = conn.Close()
	return true
}
