package main

import (
	"bufio"
	"bytes"
	"flag"
	"os"
	"strings"

	"github.com/zkrecipes/zkrecipes/framework"
)

// saslFlags are the global flags of a SASL login (framework.WithSASL). Each
// defaults to its $ZK_SASL_* variable; the password has no flag (ps would show it):
// it comes from $ZK_SASL_PASSWORD or from --sasl-file, as credentials do from
// $ZK_AUTH and --auth-file. --sasl-file's key=value lines fill what the flags and
// the environment left empty.
type saslFlags struct {
	mechanism, user, principal, keytab, service, host string
	password                                          string // $ZK_SASL_PASSWORD
	file                                              string // --sasl-file
}

// saslFromEnv is the flags' defaults, from the environment.
func saslFromEnv() saslFlags {
	return saslFlags{
		mechanism: os.Getenv("ZK_SASL_MECHANISM"),
		user:      os.Getenv("ZK_SASL_USER"),
		password:  os.Getenv("ZK_SASL_PASSWORD"),
		principal: os.Getenv("ZK_SASL_PRINCIPAL"),
		keytab:    os.Getenv("ZK_SASL_KEYTAB"),
		service:   os.Getenv("ZK_SASL_SERVICE"),
		host:      os.Getenv("ZK_SASL_HOST"),
		file:      os.Getenv("ZK_SASL_FILE"),
	}
}

func (s *saslFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.mechanism, "sasl-mechanism", s.mechanism, "log in with SASL: `DIGEST-MD5` or GSSAPI (Kerberos) (default $ZK_SASL_MECHANISM)")
	fs.StringVar(&s.user, "sasl-user", s.user, "DIGEST-MD5's `user`; its password comes from $ZK_SASL_PASSWORD or --sasl-file (default $ZK_SASL_USER)")
	fs.StringVar(&s.principal, "sasl-principal", s.principal, "GSSAPI's client `principal`, name or name@REALM (default $ZK_SASL_PRINCIPAL)")
	fs.StringVar(&s.keytab, "sasl-keytab", s.keytab, "GSSAPI's keytab `file` (default $ZK_SASL_KEYTAB; krb5.conf is $KRB5_CONFIG, else /etc/krb5.conf)")
	fs.StringVar(&s.service, "sasl-service", s.service, "the servers' Kerberos `service` name (default $ZK_SASL_SERVICE, else zookeeper)")
	fs.StringVar(&s.host, "sasl-host", s.host, "the `host` of the servers' Kerberos principal (default $ZK_SASL_HOST, else each server's host as given)")
	fs.StringVar(&s.file, "sasl-file", s.file, "read the SASL login from this `file`, key=value lines (mechanism, user, password, principal, "+
		"keytab, service, host); refused if other users can read it or its group can write it (default $ZK_SASL_FILE)")
}

// options is the client option of the login, none without one. No message quotes
// the password.
func (s *saslFlags) options() ([]framework.Option, error) {
	if s.file != "" {
		if err := s.readFile(); err != nil {
			return nil, err
		}
	}
	if s.mechanism == "" {
		if s.user != "" || s.principal != "" || s.keytab != "" || s.password != "" {
			return nil, usageError("a SASL login needs --sasl-mechanism (or $ZK_SASL_MECHANISM): DIGEST-MD5 or GSSAPI")
		}
		return nil, nil
	}
	return []framework.Option{framework.WithSASL(framework.SASLConfig{
		Mechanism: strings.ToUpper(s.mechanism), User: s.user, Password: s.password,
		Principal: s.principal, Keytab: s.keytab, ServiceName: s.service, ServerHost: s.host,
	})}, nil
}

// readFile fills the fields still empty from --sasl-file.
func (s *saslFlags) readFile() error {
	data, err := readPrivate("--sasl-file", s.file)
	if err != nil {
		return err
	}
	fields := map[string]*string{"mechanism": &s.mechanism, "user": &s.user, "password": &s.password,
		"principal": &s.principal, "keytab": &s.keytab, "service": &s.service, "host": &s.host}
	lines := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; lines.Scan(); n++ {
		line := strings.TrimSpace(lines.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, value, _ := strings.Cut(line, "=")
		field := fields[strings.TrimSpace(key)]
		if field == nil {
			return usageError("--sasl-file %s, line %d: want key=value, a key of mechanism, user, password, principal, keytab, service, host", s.file, n)
		}
		if *field == "" {
			*field = strings.TrimSpace(value)
		}
	}
	return nil
}
