package sasl

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// DigestRealm and DigestURI are what a server of ZooKeeper's runs DIGEST-MD5 with:
// Java's SASL server made with protocol "zookeeper" and server name "zk-sasl-md5",
// which checks that a client's digest-uri names them.
const (
	DigestRealm = "zk-sasl-md5"
	DigestURI   = "zookeeper/" + DigestRealm
)

// maxChallenge is RFC 2831's bound on a digest-challenge (2.1.1: less than 2048 bytes).
const maxChallenge = 2047

// recentNonces is how many of the server's nonces a DigestMD5 remembers to refuse a
// replayed one: a real server draws each at random.
const recentNonces = 64

var (
	// ErrMalformedChallenge is the error of a server's DIGEST-MD5 token that is not a
	// digest-challenge (or, in the second round trip, a response-auth) of RFC 2831's,
	// or asks for what this client does not do (other than md5-sess, auth, utf-8).
	ErrMalformedChallenge = errors.New("sasl: malformed DIGEST-MD5 challenge")
	// ErrReplayedNonce is the error of a challenge whose nonce an earlier exchange
	// of the same credentials already had.
	ErrReplayedNonce = errors.New("sasl: DIGEST-MD5 challenge replays an earlier nonce")
	// ErrServerNotVerified is the error of a server whose proof (DIGEST-MD5's rspauth)
	// does not match: it does not know the user's password.
	ErrServerNotVerified = errors.New("sasl: the server's proof does not match: it does not know the credentials")
)

// DigestMD5 is a user's credentials for SASL DIGEST-MD5 (RFC 2831) as a server of
// ZooKeeper's runs it (its DigestLoginModule's users), in realm DigestRealm with
// quality of protection "auth": authentication only, no security layer. It is safe
// for concurrent use; Mechanism makes the client of one exchange.
type DigestMD5 struct {
	user, password string

	mu     sync.Mutex
	nonces [recentNonces]string // the server's last nonces, a ring
	next   int
}

// NewDigestMD5 returns the credentials of user, whose password the server's JAAS
// file holds. Both must be non-empty UTF-8 without NUL.
func NewDigestMD5(user, password string) (*DigestMD5, error) {
	for what, s := range map[string]string{"user": user, "password": password} {
		if s == "" || !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
			return nil, fmt.Errorf("sasl: DIGEST-MD5 %s must be non-empty UTF-8 without NUL", what)
		}
	}
	return &DigestMD5{user: user, password: password}, nil
}

// Mechanism returns the client of one exchange with these credentials.
func (d *DigestMD5) Mechanism() Mechanism { return &digestClient{creds: d, uri: DigestURI} }

// remember records a server's nonce; false if one of the last recentNonces had it.
func (d *DigestMD5) remember(nonce string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, n := range d.nonces {
		if n == nonce {
			return false
		}
	}
	d.nonces[d.next] = nonce
	d.next = (d.next + 1) % recentNonces
	return true
}

// digestClient is one exchange: the server challenges, the client responds with its
// proof, the server answers with its own (rspauth), which the client checks.
type digestClient struct {
	creds   *DigestMD5
	uri     string // DigestURI; RFC 2831's example in the tests
	cnonce  string // drawn at random; RFC 2831's example in the tests
	step    int
	rspauth string // the server's proof expected in its second token
}

func (c *digestClient) Name() string { return "DIGEST-MD5" }

// Start is empty: in DIGEST-MD5 the server speaks first.
func (c *digestClient) Start() ([]byte, error) { return []byte{}, nil }

func (c *digestClient) Step(token []byte) ([]byte, bool, error) {
	c.step++
	switch c.step {
	case 1:
		if len(token) == 0 {
			return nil, false, ErrNoSASL
		}
		ch, err := parseChallenge(token)
		if err != nil {
			return nil, false, err
		}
		if !c.creds.remember(ch.nonce) {
			return nil, false, ErrReplayedNonce
		}
		return c.respond(ch)
	case 2:
		return nil, true, c.verify(token)
	}
	return nil, false, fmt.Errorf("%w: a token after the server's proof", ErrProtocol)
}

func (c *digestClient) respond(ch challenge) ([]byte, bool, error) {
	cnonce := c.cnonce
	if cnonce == "" {
		var raw [16]byte
		if _, err := rand.Read(raw[:]); err != nil {
			return nil, false, fmt.Errorf("sasl: DIGEST-MD5 cnonce: %w", err)
		}
		cnonce = base64.StdEncoding.EncodeToString(raw[:])
	}
	const nc, qop = "00000001", "auth"
	ha1 := md5Hex(string(md5Sum(c.creds.user+":"+ch.realm+":"+c.creds.password)) + ":" + ch.nonce + ":" + cnonce)
	kd := func(a2 string) string {
		return md5Hex(ha1 + ":" + ch.nonce + ":" + nc + ":" + cnonce + ":" + qop + ":" + md5Hex(a2))
	}
	c.rspauth = kd(":" + c.uri)

	var b strings.Builder
	if ch.utf8 {
		b.WriteString("charset=utf-8,")
	}
	fmt.Fprintf(&b, "username=%s,realm=%s,nonce=%s,cnonce=%s,nc=%s,qop=%s,digest-uri=%s,maxbuf=65536,response=%s",
		quote(c.creds.user), quote(ch.realm), quote(ch.nonce), quote(cnonce), nc, qop, quote(c.uri),
		kd("AUTHENTICATE:"+c.uri))
	return []byte(b.String()), false, nil
}

// verify checks the server's response-auth, rspauth=<its proof>.
func (c *digestClient) verify(token []byte) error {
	ds, err := parseDirectives(token)
	if err != nil {
		return err
	}
	if len(ds) != 1 || ds[0].name != "rspauth" {
		return fmt.Errorf("%w: the second token is not rspauth alone", ErrMalformedChallenge)
	}
	if subtle.ConstantTimeCompare([]byte(ds[0].value), []byte(c.rspauth)) != 1 {
		return ErrServerNotVerified
	}
	return nil
}

// challenge is what the client uses of a digest-challenge.
type challenge struct {
	realm, nonce string
	utf8         bool
}

// parseChallenge reads a digest-challenge (RFC 2831, 2.1.1) and checks that it asks
// for what this client does: algorithm md5-sess, qop auth among the options, charset
// utf-8 or none. Unknown directives are ignored, as the RFC says.
func parseChallenge(token []byte) (challenge, error) {
	var ch challenge
	ds, err := parseDirectives(token)
	if err != nil {
		return ch, err
	}
	seen := map[string]bool{}
	qop := "auth" // the RFC's default
	var realms []string
	algorithm := ""
	for _, d := range ds {
		if d.name != "realm" && seen[d.name] {
			return ch, fmt.Errorf("%w: %s twice", ErrMalformedChallenge, d.name)
		}
		seen[d.name] = true
		switch d.name {
		case "realm":
			realms = append(realms, d.value)
		case "nonce":
			ch.nonce = d.value
		case "qop":
			qop = d.value
		case "charset":
			if d.value != "utf-8" {
				return ch, fmt.Errorf("%w: charset %q", ErrMalformedChallenge, d.value)
			}
			ch.utf8 = true
		case "algorithm":
			algorithm = d.value
		}
	}
	switch {
	case ch.nonce == "":
		return ch, fmt.Errorf("%w: no nonce", ErrMalformedChallenge)
	case algorithm != "md5-sess":
		return ch, fmt.Errorf("%w: algorithm %q, not md5-sess", ErrMalformedChallenge, algorithm)
	case !hasOption(qop, "auth"):
		return ch, fmt.Errorf("%w: qop %q does not offer auth", ErrMalformedChallenge, qop)
	case len(realms) > 1:
		return ch, fmt.Errorf("%w: %d realms, a server of ZooKeeper's has one", ErrMalformedChallenge, len(realms))
	}
	if len(realms) == 1 {
		ch.realm = realms[0]
	}
	return ch, nil
}

func hasOption(list, want string) bool {
	for _, o := range strings.Split(list, ",") {
		if strings.TrimSpace(o) == want {
			return true
		}
	}
	return false
}

type directive struct{ name, value string }

// parseDirectives reads RFC 2831's comma-separated name=value list, a value a token
// or a quoted-string, with optional white space around the separators and empty
// elements allowed. Names are lower-cased (they are case-insensitive).
func parseDirectives(token []byte) ([]directive, error) {
	if len(token) > maxChallenge {
		return nil, fmt.Errorf("%w: %w: %d bytes, RFC 2831 allows %d", ErrMalformedChallenge, ErrTokenTooLarge, len(token), maxChallenge)
	}
	if !utf8.Valid(token) {
		return nil, fmt.Errorf("%w: not UTF-8", ErrMalformedChallenge)
	}
	s := string(token)
	var ds []directive
	i := 0
	skipSpace := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n') {
			i++
		}
	}
	for {
		for skipSpace(); i < len(s) && s[i] == ','; skipSpace() {
			i++
		}
		if i == len(s) {
			break
		}
		name := readToken(s, &i)
		if name == "" {
			return nil, fmt.Errorf("%w: a directive without a name at byte %d", ErrMalformedChallenge, i)
		}
		skipSpace()
		if i == len(s) || s[i] != '=' {
			return nil, fmt.Errorf("%w: %s has no value", ErrMalformedChallenge, name)
		}
		i++
		skipSpace()
		var value string
		if i < len(s) && s[i] == '"' {
			v, err := readQuoted(s, &i)
			if err != nil {
				return nil, fmt.Errorf("%w: %s: %w", ErrMalformedChallenge, name, err)
			}
			value = v
		} else {
			value = readToken(s, &i)
		}
		ds = append(ds, directive{strings.ToLower(name), value})
		skipSpace()
		if i < len(s) && s[i] != ',' {
			return nil, fmt.Errorf("%w: %q after %s's value", ErrMalformedChallenge, s[i], name)
		}
	}
	return ds, nil
}

// readToken reads an HTTP token (RFC 2616's: no separators, controls or spaces).
func readToken(s string, i *int) string {
	start := *i
	for *i < len(s) && s[*i] > ' ' && s[*i] < 0x7f && !strings.ContainsRune(`()<>@,;:\"/[]?={}`, rune(s[*i])) {
		*i++
	}
	return s[start:*i]
}

// readQuoted reads a quoted-string whose opening quote is at *i, undoing \ escapes.
func readQuoted(s string, i *int) (string, error) {
	var b strings.Builder
	for j := *i + 1; j < len(s); j++ {
		switch s[j] {
		case '"':
			*i = j + 1
			return b.String(), nil
		case '\\':
			j++
			if j == len(s) {
				return "", errors.New("an escape at the end")
			}
		}
		b.WriteByte(s[j])
	}
	return "", errors.New("no closing quote")
}

// quote writes s as a quoted-string.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

func md5Sum(s string) []byte { h := md5.Sum([]byte(s)); return h[:] }
func md5Hex(s string) string { return hex.EncodeToString(md5Sum(s)) }
