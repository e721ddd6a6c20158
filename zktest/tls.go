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
	// clientAuth: the server requires a client certificate signed by the CA, such as
	// client (ssl.clientAuth=need).
	clientAuth bool
	client     tls.Certificate
	clientCert []byte // PEM, the client's certificate
	clientKey  []byte // PEM, its private key (PKCS#8)
}

func newServerTLS(clientAuth bool) (*serverTLS, error) {
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
	// The server's certificate serves for client auth too, as ZooKeeper's servers use
	// theirs toward each other; the client's is made the same way, for 127.0.0.1,
	// which ZooKeeper checks against the client's address (ssl.hostnameVerification).
	leaf := func(serial int64, name string) (certPEM, keyPEM []byte, err error) {
		cert, key, err := newCert(&x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      pkix.Name{CommonName: name},
			NotBefore:    ca.NotBefore,
			NotAfter:     ca.NotAfter,
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
			IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
			DNSNames:     []string{"localhost"},
		}, ca, caKey)
		if err != nil {
			return nil, nil, err
		}
		pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return nil, nil, fmt.Errorf("zktest: %w", err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}),
			pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}), nil
	}
	s := &serverTLS{ca: ca, caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw}), clientAuth: clientAuth}
	cert, key, err := leaf(2, "localhost")
	if err != nil {
		return nil, err
	}
	s.certPEM = append(append(key, cert...), s.caPEM...)
	if s.clientCert, s.clientKey, err = leaf(3, "zktest client"); err != nil {
		return nil, err
	}
	if s.client, err = tls.X509KeyPair(s.clientCert, s.clientKey); err != nil {
		return nil, fmt.Errorf("zktest: %w", err)
	}
	return s, nil
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

// clientConfig trusts the CA, and nothing else; it presents no certificate.
func (s *serverTLS) clientConfig() *tls.Config {
	if s == nil {
		return nil
	}
	pool := x509.NewCertPool()
	pool.AddCert(s.ca)
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

// clientCertConfig is clientConfig presenting the client certificate.
func (s *serverTLS) clientCertConfig() *tls.Config {
	cfg := s.clientConfig()
	if cfg != nil {
		cfg.Certificates = []tls.Certificate{s.client}
	}
	return cfg
}

func (s *serverTLS) clientCertPEM() (cert, key []byte) {
	if s == nil {
		return nil, nil
	}
	return append([]byte(nil), s.clientCert...), append([]byte(nil), s.clientKey...)
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
	clientAuth := "none"
	if s.clientAuth {
		clientAuth = "need"
	}
	return []string{
		"secureClientPort=" + fmt.Sprint(securePort),
		"secureClientPortAddress=127.0.0.1",
		"serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory",
		"ssl.keyStore.location=" + keyStore,
		"ssl.keyStore.type=PEM",
		"ssl.trustStore.location=" + trustStore,
		"ssl.trustStore.type=PEM",
		"ssl.clientAuth=" + clientAuth,
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
	// With TLS 1.3 the client's side of a handshake ends before the server has checked
	// the client's certificate, so without one the probe could not tell a server that
	// refuses it from one that is not ready; it always presents one.
	d := tls.Dialer{Config: m.tls.clientCertConfig()}
	conn, err := d.DialContext(ctx, "tcp", m.secureAddr())
	if err != nil {
		return false
	}
	_ = conn.Close()
	return true
}
