package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"os"
)

// tlsFlags are the global flags for ZooKeeper's secure client port.
type tlsFlags struct {
	on         bool
	caFile     string
	certFile   string
	keyFile    string
	serverName string
}

func (t *tlsFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&t.on, "tls", t.on, "connect over TLS (to the servers' secureClientPort), trusting the system's certificate authorities")
	fs.StringVar(&t.caFile, "tls-ca", t.caFile, "trust the certificate authorities in this PEM `file` instead (implies --tls)")
	fs.StringVar(&t.certFile, "tls-cert", t.certFile, "present the client certificate in this PEM `file`, with --tls-key (implies --tls)")
	fs.StringVar(&t.keyFile, "tls-key", t.keyFile, "the client certificate's private key, a PEM `file`")
	fs.StringVar(&t.serverName, "tls-server-name", t.serverName,
		"check the servers' certificates for this `name` (default: each server's host as given)")
}

// config is the TLS configuration the flags ask for, or nil for plaintext.
func (t *tlsFlags) config() (*tls.Config, error) {
	if !t.on && t.caFile == "" && t.certFile == "" && t.keyFile == "" && t.serverName == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.serverName}
	if t.caFile != "" {
		pem, err := os.ReadFile(t.caFile)
		if err != nil {
			return nil, fmt.Errorf("--tls-ca: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-ca: no PEM certificate in %s", t.caFile)
		}
	}
	if (t.certFile == "") != (t.keyFile == "") {
		return nil, errors.New("--tls-cert and --tls-key go together")
	}
	if t.certFile != "" {
		cert, err := tls.LoadX509KeyPair(t.certFile, t.keyFile)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
