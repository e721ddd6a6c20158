package sasl

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// The GSS-API token formats that Kerberos's SASL mechanism carries: the framing of
// a context token (RFC 2743, 3.1, with RFC 1964's token ids) around the AP-REQ, the
// AP-REP or a KRB-ERROR, and RFC 4121's wrap token, which carries the security-layer
// negotiation once the context is established.

// krb5OID is the DER encoding of Kerberos V5's mechanism OID, 1.2.840.113554.1.2.2.
var krb5OID = []byte{0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02}

// The token ids of RFC 1964 (1.1) that follow the OID in a context token.
var (
	tokAPReq    = [2]byte{0x01, 0x00}
	tokAPRep    = [2]byte{0x02, 0x00}
	tokKRBError = [2]byte{0x03, 0x00}
)

// ErrMalformedToken is the error of a server's GSSAPI token that is not one of
// Kerberos's context tokens or RFC 4121's wrap tokens, or is one this client does not
// expect.
var ErrMalformedToken = errors.New("sasl: malformed GSSAPI token")

// contextToken frames a Kerberos message as a GSS-API context token.
func contextToken(id [2]byte, msg []byte) []byte {
	inner := len(krb5OID) + len(id) + len(msg)
	b := []byte{0x60}
	b = appendDERLength(b, inner)
	b = append(b, krb5OID...)
	b = append(b, id[:]...)
	return append(b, msg...)
}

func appendDERLength(b []byte, n int) []byte {
	if n < 0x80 {
		return append(b, byte(n))
	}
	var be [8]byte
	binary.BigEndian.PutUint64(be[:], uint64(n))
	digits := bytes.TrimLeft(be[:], "\x00")
	b = append(b, 0x80|byte(len(digits)))
	return append(b, digits...)
}

// parseContextToken reads a context token of Kerberos's: its token id and the
// Kerberos message it carries.
func parseContextToken(b []byte) (id [2]byte, msg []byte, err error) {
	if len(b) < 2 || b[0] != 0x60 {
		return id, nil, fmt.Errorf("%w: not a context token", ErrMalformedToken)
	}
	n, rest, err := parseDERLength(b[1:])
	if err != nil {
		return id, nil, err
	}
	if n != len(rest) {
		return id, nil, fmt.Errorf("%w: context token of %d bytes says %d", ErrMalformedToken, len(rest), n)
	}
	if !bytes.HasPrefix(rest, krb5OID) {
		return id, nil, fmt.Errorf("%w: not Kerberos V5's mechanism", ErrMalformedToken)
	}
	rest = rest[len(krb5OID):]
	if len(rest) < 2 {
		return id, nil, fmt.Errorf("%w: no token id", ErrMalformedToken)
	}
	copy(id[:], rest)
	return id, rest[2:], nil
}

// parseDERLength reads a definite DER length of at most 4 bytes.
func parseDERLength(b []byte) (int, []byte, error) {
	if len(b) == 0 {
		return 0, nil, fmt.Errorf("%w: no length", ErrMalformedToken)
	}
	if b[0] < 0x80 {
		return int(b[0]), b[1:], nil
	}
	k := int(b[0] & 0x7f)
	if k == 0 || k > 4 || len(b) < 1+k {
		return 0, nil, fmt.Errorf("%w: bad length of %d bytes", ErrMalformedToken, k)
	}
	n := 0
	for _, d := range b[1 : 1+k] {
		n = n<<8 | int(d)
	}
	return n, b[1+k:], nil
}

// The flags of a wrap token (RFC 4121, 4.2.2).
const (
	wrapSentByAcceptor = 0x01
	wrapSealed         = 0x02
	wrapAcceptorSubkey = 0x04
)

// wrapToken is an RFC 4121 wrap token without confidentiality (what ZooKeeper's
// server sends): a payload and its checksum, under a 16-byte header.
type wrapToken struct {
	flags    byte
	seq      uint64
	payload  []byte
	checksum []byte
}

// parseWrapToken reads a wrap token from the acceptor, undoing its rotation (RRC).
// A sealed (encrypted) token is refused: this client negotiates no security layer,
// and a server of ZooKeeper's wraps its offer in the clear.
func parseWrapToken(b []byte) (wrapToken, error) {
	var t wrapToken
	if len(b) < 16 {
		return t, fmt.Errorf("%w: wrap token of %d bytes", ErrMalformedToken, len(b))
	}
	if b[0] != 0x05 || b[1] != 0x04 {
		return t, fmt.Errorf("%w: token id %#x%02x is not RFC 4121's wrap token (an etype older than AES?)", ErrMalformedToken, b[0], b[1])
	}
	t.flags = b[2]
	switch {
	case t.flags&^(wrapSentByAcceptor|wrapSealed|wrapAcceptorSubkey) != 0:
		return t, fmt.Errorf("%w: unknown wrap flags %#x", ErrMalformedToken, t.flags)
	case t.flags&wrapSentByAcceptor == 0:
		return t, fmt.Errorf("%w: wrap token not from the acceptor", ErrMalformedToken)
	case t.flags&wrapSealed != 0:
		return t, fmt.Errorf("%w: sealed wrap token, but no security layer was negotiated", ErrMalformedToken)
	case b[3] != 0xff:
		return t, fmt.Errorf("%w: wrap filler %#x", ErrMalformedToken, b[3])
	}
	ec := int(binary.BigEndian.Uint16(b[4:6]))
	rrc := int(binary.BigEndian.Uint16(b[6:8]))
	t.seq = binary.BigEndian.Uint64(b[8:16])
	data := b[16:]
	if ec > len(data) {
		return t, fmt.Errorf("%w: checksum of %d bytes in %d", ErrMalformedToken, ec, len(data))
	}
	if len(data) > 0 && rrc%len(data) != 0 {
		r := rrc % len(data)
		data = append(append([]byte{}, data[r:]...), data[:r]...)
	}
	t.payload, t.checksum = data[:len(data)-ec], data[len(data)-ec:]
	return t, nil
}
