package sasl

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/chksumtype"
	"github.com/jcmturner/gokrb5/v8/iana/flags"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/types"
)

// DefaultService is the first part of a ZooKeeper server's Kerberos principal,
// zookeeper/<host>, as ZooKeeper's Java client assumes it.
const DefaultService = "zookeeper"

// The GSS-API flags a client asks for in its authenticator's checksum (RFC 4121,
// 4.1.1.1): mutual authentication, and integrity, which the wrap tokens of the
// security-layer negotiation use.
const (
	gssMutual = 2
	gssInteg  = 32
)

// The security layers of RFC 4752's negotiation: this client takes none, the one a
// server of ZooKeeper's offers.
const layerNone = 0x01

// GSSAPI is a Kerberos principal's login (RFC 4752's SASL GSSAPI, Kerberos V5) to
// the servers of one ensemble, whose principal is service/host. It is safe for
// concurrent use; Mechanism makes the client of one exchange.
type GSSAPI struct {
	kc  *client.Client
	spn string
}

// NewGSSAPI returns the login of kc's principal to the server principal
// service/host: service "" is DefaultService; host is the name the servers' keytab
// has (ZooKeeper's Java client uses the host name it connected to). kc, a gokrb5
// client made from a keytab or a password, is the caller's: it renews its own
// ticket-granting ticket until the caller destroys it. Every exchange asks kc for a
// service ticket, which kc caches; the KDC's answer is not bounded by a context but
// by kc's own timeouts (krb5.conf's), as gokrb5 has none.
func NewGSSAPI(kc *client.Client, service, host string) (*GSSAPI, error) {
	if kc == nil || kc.Credentials == nil {
		return nil, errors.New("sasl: GSSAPI needs a Kerberos client")
	}
	if service == "" {
		service = DefaultService
	}
	if host == "" || strings.ContainsAny(service+host, "/@ ") {
		return nil, fmt.Errorf("sasl: GSSAPI: bad server principal %q/%q (a service and a host name, neither with / @ or a space)", service, host)
	}
	return &GSSAPI{kc: kc, spn: service + "/" + host}, nil
}

// Mechanism returns the client of one exchange.
func (g *GSSAPI) Mechanism() Mechanism { return &gssClient{g: g} }

// gssClient is one exchange (RFC 4752, 3.1): the AP-REQ; the server's AP-REP, which
// proves it is the principal; an empty token; the server's wrapped offer of security
// layers; the client's wrapped choice, none; the server's empty answer.
type gssClient struct {
	g          *GSSAPI
	step       int
	sessionKey types.EncryptionKey
	subkey     *types.EncryptionKey // the acceptor's, from the AP-REP, if it made one
	auth       types.Authenticator
}

func (c *gssClient) Name() string { return "GSSAPI" }

// Start gets a service ticket and returns the AP-REQ, asking for mutual
// authentication.
func (c *gssClient) Start() ([]byte, error) {
	tkt, key, err := c.g.kc.GetServiceTicket(c.g.spn)
	if err != nil {
		return nil, fmt.Errorf("no Kerberos ticket to %s: %w", c.g.spn, err)
	}
	creds := c.g.kc.Credentials
	auth, err := types.NewAuthenticator(creds.Domain(), creds.CName())
	if err != nil {
		return nil, fmt.Errorf("a Kerberos authenticator: %w", err)
	}
	// RFC 4121, 4.1.1: a 16-byte channel binding (none: zeros) and the flags.
	sum := make([]byte, 24)
	binary.LittleEndian.PutUint32(sum[0:4], 16)
	binary.LittleEndian.PutUint32(sum[20:24], gssMutual|gssInteg)
	auth.Cksum = types.Checksum{CksumType: chksumtype.GSSAPI, Checksum: sum}
	req, err := messages.NewAPReq(tkt, key, auth)
	if err != nil {
		return nil, fmt.Errorf("a Kerberos AP-REQ: %w", err)
	}
	types.SetFlag(&req.APOptions, flags.APOptionMutualRequired)
	msg, err := req.Marshal()
	if err != nil {
		return nil, fmt.Errorf("a Kerberos AP-REQ: %w", err)
	}
	c.sessionKey, c.auth = key, auth
	return contextToken(tokAPReq, msg), nil
}

func (c *gssClient) Step(token []byte) ([]byte, bool, error) {
	c.step++
	switch c.step {
	case 1:
		return []byte{}, false, c.checkAPRep(token)
	case 2:
		resp, err := c.chooseLayer(token)
		return resp, err == nil, err
	}
	return nil, false, fmt.Errorf("%w: a token after the security layer was chosen", ErrProtocol)
}

// checkAPRep checks the server's AP-REP: it must be encrypted with the ticket's
// session key and echo the authenticator's time, which only the service principal can.
func (c *gssClient) checkAPRep(token []byte) error {
	if len(token) == 0 {
		// A GSSAPI server that skips mutual authentication would answer so too, but
		// ZooKeeper's (Java's) always answers an AP-REQ that asks for it.
		return ErrNoSASL
	}
	id, msg, err := parseContextToken(token)
	if err != nil {
		return err
	}
	switch id {
	case tokAPRep:
	case tokKRBError:
		var kerr messages.KRBError
		if err := kerr.Unmarshal(msg); err != nil {
			return fmt.Errorf("%w: KRB-ERROR: %w", ErrMalformedToken, err)
		}
		return fmt.Errorf("%w: the server answered with a Kerberos error: %s", ErrRefused, kerr.Error())
	default:
		return fmt.Errorf("%w: token id %x where an AP-REP was due", ErrMalformedToken, id)
	}
	var rep messages.APRep
	if err := rep.Unmarshal(msg); err != nil {
		return fmt.Errorf("%w: AP-REP: %w", ErrMalformedToken, err)
	}
	plain, err := decrypt(rep.EncPart.Cipher, c.sessionKey, keyusage.AP_REP_ENCPART)
	if err != nil {
		return fmt.Errorf("%w: its AP-REP: %w", ErrServerNotVerified, err)
	}
	var part messages.EncAPRepPart
	if err := part.Unmarshal(plain); err != nil {
		return fmt.Errorf("%w: AP-REP: %w", ErrMalformedToken, err)
	}
	if part.CTime.Unix() != c.auth.CTime.Unix() || part.Cusec != c.auth.Cusec {
		return fmt.Errorf("%w: its AP-REP answers another authenticator", ErrServerNotVerified)
	}
	if part.Subkey.KeyType != 0 {
		c.subkey = &part.Subkey
	}
	return nil
}

// chooseLayer checks the server's wrapped offer of security layers (RFC 4752, 3.1:
// one byte of layers, three of the largest message it takes) and answers with no
// security layer, wrapped the same way, without an authorization identity.
func (c *gssClient) chooseLayer(token []byte) ([]byte, error) {
	wt, err := parseWrapToken(token)
	if err != nil {
		return nil, err
	}
	key, subkeyFlag := c.sessionKey, byte(0)
	if c.subkey != nil {
		key, subkeyFlag = *c.subkey, wrapAcceptorSubkey
	}
	if wt.flags&wrapAcceptorSubkey != subkeyFlag {
		return nil, fmt.Errorf("%w: wrap token's acceptor-subkey flag does not match the AP-REP", ErrMalformedToken)
	}
	check := gssapi.WrapToken{Flags: wt.flags, EC: uint16(len(wt.checksum)), SndSeqNum: wt.seq,
		Payload: wt.payload, CheckSum: wt.checksum}
	if ok, err := check.Verify(key, keyusage.GSSAPI_ACCEPTOR_SEAL); !ok {
		return nil, fmt.Errorf("%w: its wrap token: %w", ErrServerNotVerified, err)
	}
	if len(wt.payload) != 4 {
		return nil, fmt.Errorf("%w: security-layer offer of %d bytes, not 4", ErrMalformedToken, len(wt.payload))
	}
	if wt.payload[0]&layerNone == 0 {
		return nil, fmt.Errorf("%w: the server requires a security layer (offer %#x); this client takes none", ErrProtocol, wt.payload[0])
	}
	etype, err := crypto.GetEtype(key.KeyType)
	if err != nil {
		return nil, fmt.Errorf("sasl: GSSAPI: %w", err)
	}
	answer := gssapi.WrapToken{Flags: subkeyFlag, EC: uint16(etype.GetHMACBitLength() / 8),
		SndSeqNum: uint64(c.auth.SeqNumber), Payload: []byte{layerNone, 0, 0, 0}}
	if err := answer.SetCheckSum(key, keyusage.GSSAPI_INITIATOR_SEAL); err != nil {
		return nil, fmt.Errorf("sasl: GSSAPI: %w", err)
	}
	return answer.Marshal()
}

// decrypt opens a server's ciphertext with key. gokrb5 slices the checksum off the
// end without looking at the length (v8.4.4 panics on fewer bytes than the checksum),
// so a ciphertext too short to hold a confounder and a checksum is refused here.
func decrypt(cipher []byte, key types.EncryptionKey, usage uint32) ([]byte, error) {
	et, err := crypto.GetEtype(key.KeyType)
	if err != nil {
		return nil, err
	}
	if least := et.GetConfounderByteSize() + et.GetHMACBitLength()/8; len(cipher) < least {
		return nil, fmt.Errorf("%w: %d bytes of ciphertext, fewer than the %d of a confounder and a checksum", ErrMalformedToken, len(cipher), least)
	}
	return crypto.DecryptMessage(cipher, key, usage)
}
