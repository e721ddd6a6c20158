package zktest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// SASLDigestRealm is the realm a ZooKeeper server's SASL DIGEST-MD5 runs in. It is
// ZooKeeper's own and fixed: its server names itself so to Java's SASL, and a client's
// digest-uri is zookeeper/zk-sasl-md5.
const SASLDigestRealm = "zk-sasl-md5"

// secured is how a server refuses clients that have not authenticated: the zoo.cfg
// lines, the JVM's system properties and the JAAS file of its SASL login.
type secured struct {
	schemes    []string          // WithRequireAuth's
	saslUsers  map[string]string // WithSASLDigest's users and passwords
	kdc        *KDC              // WithKerberos's
	kerberosOn bool
}

// WithRequireAuth has the servers refuse every request of a session that has not
// authenticated with one of the schemes ("digest" for addauth digest), with error
// -124 (zoo.cfg's enforce.auth.enabled and enforce.auth.schemes, ZooKeeper 3.7 and
// later: 3.8.0 and 3.9.6 have them). Four-letter words are still served. Default:
// every client is served.
func WithRequireAuth(schemes ...string) Option {
	return func(c *config) { c.secured.schemes = append(c.secured.schemes, schemes...) }
}

// WithSASLDigest has the servers accept SASL DIGEST-MD5 logins of this user and
// password (ZooKeeper's DigestLoginModule, in realm SASLDigestRealm) and refuse every
// request of a session that has not logged in so (sessionRequireClientSASLAuth), with
// error -124. Several calls add several users. On ZooKeeper 3.9, whose servers refuse
// DIGEST-MD5 in their default FIPS mode, it also sets zookeeper.fips-mode=false.
// Default: no SASL.
func WithSASLDigest(user, password string) Option {
	return func(c *config) {
		if c.secured.saslUsers == nil {
			c.secured.saslUsers = map[string]string{}
		}
		c.secured.saslUsers[user] = password
	}
}

// WithKerberos has the servers log in to kdc as KDCServerPrincipal with its keytab,
// accept SASL GSSAPI (Kerberos V5) logins of the realm's principals and refuse every
// request of a session that has not logged in so (sessionRequireClientSASLAuth), with
// error -124. A session's identity is the principal's first part (client, for
// client@ZKR.TEST), as in the usual production setting. Default: no SASL.
func WithKerberos(kdc *KDC) Option {
	return func(c *config) { c.secured.kdc, c.secured.kerberosOn = kdc, true }
}

var (
	schemeName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	// A JAAS option's name and value are written between quotes in the JAAS file.
	jaasSafe = regexp.MustCompile(`^[A-Za-z0-9_.@/+=:,!#%&*()\[\]{}<>?|~^$' -]+$`)
)

func (s secured) validate() error {
	switch {
	case s.kerberosOn && s.kdc == nil:
		return errors.New("zktest: WithKerberos needs a KDC, not nil")
	case s.kerberosOn && s.saslUsers != nil:
		return errors.New("zktest: a server's SASL is Kerberos or DIGEST-MD5, not both")
	}
	for _, scheme := range s.schemes {
		if !schemeName.MatchString(scheme) {
			return fmt.Errorf("zktest: bad authentication scheme %q", scheme)
		}
	}
	for user, password := range s.saslUsers {
		if !schemeName.MatchString(user) || !jaasSafe.MatchString(password) {
			return fmt.Errorf("zktest: WithSASLDigest's user %q or its password cannot be written in a JAAS file (letters, digits, _ and - in a user; no quote, backslash or line break in a password)", user)
		}
	}
	return nil
}

func (s secured) sasl() bool { return s.kerberosOn || s.saslUsers != nil }

// configLines are zoo.cfg's lines for WithRequireAuth.
func (s secured) configLines() []string {
	if len(s.schemes) == 0 {
		return nil
	}
	return []string{"enforce.auth.enabled=true", "enforce.auth.schemes=" + strings.Join(s.schemes, ",")}
}

// jvmArgs are the server's system properties for SASL, whose JAAS file writeJAAS
// wrote into dir. They are system properties rather than zoo.cfg lines because Java's
// login and Kerberos read them before ZooKeeper reads its configuration.
func (s secured) jvmArgs(dir string) []string {
	if !s.sasl() {
		return nil
	}
	args := []string{
		"-Djava.security.auth.login.config=" + filepath.Join(dir, "jaas.conf"),
		"-Dzookeeper.authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider",
		"-Dzookeeper.sessionRequireClientSASLAuth=true",
	}
	if s.saslUsers != nil {
		// ZooKeeper 3.9 runs in FIPS mode by default, in which its server refuses
		// DIGEST-MD5 (MD5 is not a FIPS algorithm) and says so only in its log.
		args = append(args, "-Dzookeeper.fips-mode=false")
	}
	if s.kerberosOn {
		args = append(args,
			"-Djava.security.krb5.conf="+s.kdc.Krb5Conf(),
			"-Dzookeeper.kerberos.removeHostFromPrincipal=true",
			"-Dzookeeper.kerberos.removeRealmFromPrincipal=true")
	}
	return args
}

// writeJAAS writes the JAAS file of the server's SASL login into dir, if it has one.
func (s secured) writeJAAS(dir string) error {
	var module string
	switch {
	case s.kerberosOn:
		module = fmt.Sprintf("com.sun.security.auth.module.Krb5LoginModule required\n  useKeyTab=true keyTab=%q storeKey=true useTicketCache=false doNotPrompt=true\n  principal=\"%s@%s\";",
			s.kdc.ServerKeytab(), KDCServerPrincipal, KDCRealm)
	case s.saslUsers != nil:
		users := make([]string, 0, len(s.saslUsers))
		for user := range s.saslUsers {
			users = append(users, user)
		}
		sort.Strings(users)
		var b strings.Builder
		b.WriteString("org.apache.zookeeper.server.auth.DigestLoginModule required")
		for _, user := range users {
			fmt.Fprintf(&b, "\n  user_%s=\"%s\"", user, s.saslUsers[user])
		}
		b.WriteString(";")
		module = b.String()
	default:
		return nil
	}
	text := "Server {\n  " + module + "\n};\n"
	if err := os.WriteFile(filepath.Join(dir, "jaas.conf"), []byte(text), 0o600); err != nil {
		return fmt.Errorf("zktest: %w", err)
	}
	return nil
}
