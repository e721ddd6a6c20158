package framework

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/zkrecipes/zkrecipes/framework/internal/sasl"
)

// The SASL mechanisms WithSASL speaks.
const (
	SASLDigestMD5 = "DIGEST-MD5" // a user and password of the server's JAAS DigestLoginModule
	SASLGSSAPI    = "GSSAPI"     // Kerberos V5
)

// SASLConfig is a client's SASL login (WithSASL).
type SASLConfig struct {
	// Mechanism is SASLDigestMD5 or SASLGSSAPI.
	Mechanism string

	// User and Password are DIGEST-MD5's: a user of the server's JAAS Server section
	// (DigestLoginModule's user_<name>="<password>"). Password is GSSAPI's too, for a
	// principal logged in with a password instead of a keytab.
	User, Password string

	// Principal is GSSAPI's client principal, "name" in krb5.conf's default realm
	// or "name@REALM"; Keytab is the file of its keys (or give Password).
	Principal, Keytab string
	// Krb5Conf is the Kerberos configuration file. Default: $KRB5_CONFIG, else
	// /etc/krb5.conf.
	Krb5Conf string
	// ServiceName is the first part of the servers' principal, ServiceName/host.
	// Default "zookeeper", as ZooKeeper's Java client.
	ServiceName string
	// ServerHost is the host part of the servers' principal. Default: each server's
	// host as written in the server list, with no reverse lookup: a list of IP
	// addresses needs ServerHost (or the servers' principals named by address).
	ServerHost string
}

// String shows the configuration without its password, so that a log or an error
// that prints it gives no secret away.
func (c SASLConfig) String() string {
	if c.Password != "" {
		c.Password = "<redacted>"
	}
	type plain SASLConfig // no String method: printed field by field
	return fmt.Sprintf("%+v", plain(c))
}

// GoString is String, for %#v.
func (c SASLConfig) GoString() string { return c.String() }

// WithSASL logs in with SASL on every connection, before any other request: as a
// server that requires it (sessionRequireClientSASLAuth, or
// enforce.auth.schemes=sasl) expects. New checks the configuration and, for GSSAPI,
// reads the Kerberos configuration and the keytab; the Kerberos login itself
// happens at the first connection, and again when it failed. A refused login ends
// its connection and is retried, a second apart after each pass over the servers;
// WaitConnected's error and the connection's log say what was refused and by whom.
// Default: no SASL.
func WithSASL(cfg SASLConfig) Option {
	return func(o *options) error {
		if o.sasl != nil {
			return invalidOption("WithSASL given twice")
		}
		l, err := newSASLLogin(cfg)
		if err != nil {
			return fmt.Errorf("%w: WithSASL: %w", ErrInvalidOption, err)
		}
		o.sasl = l
		return nil
	}
}

// saslLogin makes each connection's SASL mechanism. For GSSAPI it keeps one
// Kerberos client, logged in at the first connection, which renews its own ticket
// until the Client closes.
type saslLogin struct {
	digest *sasl.DigestMD5 // DIGEST-MD5's credentials; nil for GSSAPI

	service, host string

	mu       sync.Mutex // held through a Kerberos login, so Close waits for it
	kc       *client.Client
	loggedIn bool
	closed   bool
}

func newSASLLogin(cfg SASLConfig) (*saslLogin, error) {
	switch cfg.Mechanism {
	case SASLDigestMD5:
		if cfg.Principal != "" || cfg.Keytab != "" || cfg.Krb5Conf != "" || cfg.ServiceName != "" || cfg.ServerHost != "" {
			return nil, errors.New("DIGEST-MD5 takes a User and a Password only")
		}
		d, err := sasl.NewDigestMD5(cfg.User, cfg.Password)
		if err != nil {
			return nil, err
		}
		return &saslLogin{digest: d}, nil
	case SASLGSSAPI:
		return newKerberosLogin(cfg)
	}
	return nil, fmt.Errorf("unknown mechanism %q (want %q or %q)", cfg.Mechanism, SASLDigestMD5, SASLGSSAPI)
}

func newKerberosLogin(cfg SASLConfig) (*saslLogin, error) {
	switch {
	case cfg.User != "":
		return nil, errors.New("GSSAPI takes a Principal, not a User")
	case cfg.Principal == "":
		return nil, errors.New("GSSAPI needs a Principal")
	case (cfg.Keytab == "") == (cfg.Password == ""):
		return nil, errors.New("GSSAPI needs a Keytab or a Password, not both")
	case strings.ContainsAny(cfg.ServiceName+cfg.ServerHost, "/@ "):
		return nil, fmt.Errorf("bad server principal %q/%q", cfg.ServiceName, cfg.ServerHost)
	}
	path := cmp.Or(cfg.Krb5Conf, os.Getenv("KRB5_CONFIG"), "/etc/krb5.conf")
	kconf, err := config.Load(path)
	if err != nil {
		return nil, fmt.Errorf("the Kerberos configuration %s: %w", path, err)
	}
	name, realm, _ := strings.Cut(cfg.Principal, "@")
	realm = cmp.Or(realm, kconf.LibDefaults.DefaultRealm)
	if name == "" || realm == "" {
		return nil, fmt.Errorf("principal %q: no realm, and %s has no default_realm", cfg.Principal, path)
	}
	// gokrb5 does not speak FAST, which MIT's KDC offers.
	var kc *client.Client
	if cfg.Keytab != "" {
		kt, err := keytab.Load(cfg.Keytab)
		if err != nil {
			return nil, fmt.Errorf("keytab %s: %w", cfg.Keytab, err)
		}
		kc = client.NewWithKeytab(name, realm, kt, kconf, client.DisablePAFXFAST(true))
	} else {
		kc = client.NewWithPassword(name, realm, cfg.Password, kconf, client.DisablePAFXFAST(true))
	}
	return &saslLogin{kc: kc, service: cmp.Or(cfg.ServiceName, sasl.DefaultService), host: cfg.ServerHost}, nil
}

// mechanism is the mechanism of one connection to a server written host in the
// server list (wire.Config.SASL).
func (l *saslLogin) mechanism(host string) (sasl.Mechanism, error) {
	if l.digest != nil {
		return l.digest.Mechanism(), nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, ErrClosed
	}
	if !l.loggedIn {
		// Bounded by krb5.conf's timeouts, not a context: gokrb5 takes none.
		if err := l.kc.Login(); err != nil {
			return nil, fmt.Errorf("GSSAPI: Kerberos login of %s: %w", l.kc.Credentials.CName().PrincipalNameString()+"@"+l.kc.Credentials.Domain(), err)
		}
		l.loggedIn = true
	}
	g, err := sasl.NewGSSAPI(l.kc, l.service, cmp.Or(l.host, host))
	if err != nil {
		return nil, err
	}
	return g.Mechanism(), nil
}

// close ends the Kerberos client's renewals.
func (l *saslLogin) close() {
	if l == nil || l.kc == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	l.kc.Destroy()
}

// saslMechanism is the connections' wire.Config.SASL: nil without SASL.
func (o *options) saslMechanism() func(host string) (sasl.Mechanism, error) {
	if o.sasl == nil {
		return nil
	}
	return o.sasl.mechanism
}

// What a SASL login can end with (WaitConnected's error wraps it, with the
// mechanism and the server).
var (
	// ErrSASLRefused: the server refused the login: wrong password, a user or
	// principal it does not know, or a mechanism it does not run (ZooKeeper's
	// servers answer all alike; their log says which).
	ErrSASLRefused = sasl.ErrRefused
	// ErrSASLNotOffered: the server runs no SASL login (no JAAS Server section).
	ErrSASLNotOffered = sasl.ErrNoSASL
)
