package sasl

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// OpSASL is the opcode of ZooKeeper's sasl request, which carries one SASL token to
// the server; the server's reply carries its answer.
const OpSASL = 102

// MaxTokenSize bounds a server's token. The largest a server of ZooKeeper's sends is
// a DIGEST-MD5 challenge (under 2 KiB by RFC 2831) or a Kerberos AP-REP (under 1 KiB);
// a larger one is a hostile or broken server's, refused before it is read into memory.
const MaxTokenSize = 64 << 10

// ErrMalformedRecord is the error of a sasl reply that is not a SetSASLResponse.
var ErrMalformedRecord = errors.New("sasl: malformed SetSASLResponse")

// AppendRequest appends the body of a sasl request (jute's GetSASLRequest: the token
// as a buffer, its int32 length first) to b. The request header (xid, OpSASL) is the
// caller's.
func AppendRequest(b, token []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(token)))
	return append(b, token...)
}

// DecodeResponse decodes the body of a sasl reply (jute's SetSASLResponse, what
// follows the reply header): the server's token, nil for the null buffer (length -1)
// that a server sends when it has nothing more to say. The body must be exactly one
// buffer of at most MaxTokenSize bytes.
func DecodeResponse(body []byte) ([]byte, error) {
	if len(body) < 4 {
		return nil, fmt.Errorf("%w: %d bytes, not a buffer's length", ErrMalformedRecord, len(body))
	}
	n := int32(binary.BigEndian.Uint32(body))
	rest := body[4:]
	switch {
	case n == -1 && len(rest) == 0:
		return nil, nil
	case n < 0:
		return nil, fmt.Errorf("%w: buffer length %d", ErrMalformedRecord, n)
	case n > MaxTokenSize:
		return nil, fmt.Errorf("%w: %w: %d bytes", ErrMalformedRecord, ErrTokenTooLarge, n)
	case int(n) != len(rest):
		return nil, fmt.Errorf("%w: buffer length %d, %d bytes follow", ErrMalformedRecord, n, len(rest))
	}
	return rest, nil
}

// Refused is the error of a sasl reply whose header carries ZooKeeper's error code
// code (-124 when the server requires a login, which it answers to any refusal): it
// wraps ErrRefused and names the code.
func Refused(code int32) error {
	return fmt.Errorf("%w (ZooKeeper error %d)", ErrRefused, code)
}
