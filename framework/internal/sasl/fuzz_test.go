package sasl

import (
	"bytes"
	"testing"

	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/types"
)

// The decoders of what a server sends, fuzzed: none may panic or hang on any input,
// and what they accept must survive its way back. Seeds: testdata/fuzz.

func FuzzDecodeResponse(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		token, err := DecodeResponse(body)
		if err != nil {
			return
		}
		if len(token) > MaxTokenSize {
			t.Fatalf("accepted a token of %d bytes", len(token))
		}
		if token != nil && !bytes.Equal(AppendRequest(nil, token), body) {
			t.Fatalf("%x decodes to %x, which encodes otherwise", body, token)
		}
	})
}

func FuzzParseChallenge(f *testing.F) {
	creds, _ := NewDigestMD5("alice", "secret")
	f.Fuzz(func(t *testing.T, token []byte) {
		ch, err := parseChallenge(token)
		if err != nil {
			return
		}
		if ch.nonce == "" {
			t.Fatal("accepted a challenge without a nonce")
		}
		// The response quotes the server's nonce and realm: they must read back whole.
		c := &digestClient{creds: creds, uri: DigestURI}
		resp, _, err := c.respond(ch)
		if err != nil {
			t.Fatal(err)
		}
		ds, err := parseDirectives(resp)
		if err != nil {
			t.Fatalf("the response %q does not parse: %v", resp, err)
		}
		for _, d := range ds {
			if (d.name == "nonce" && d.value != ch.nonce) || (d.name == "realm" && d.value != ch.realm) {
				t.Fatalf("%s reads back as %q", d.name, d.value)
			}
		}
	})
}

func FuzzParseWrapToken(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		wt, err := parseWrapToken(b)
		if err != nil {
			return
		}
		if len(wt.payload)+len(wt.checksum) != len(b)-16 {
			t.Fatalf("%d bytes of payload and checksum in a %d-byte token", len(wt.payload)+len(wt.checksum), len(b))
		}
	})
}

func FuzzParseContextToken(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		id, msg, err := parseContextToken(b)
		if err != nil {
			return
		}
		id2, msg2, err := parseContextToken(contextToken(id, msg))
		if err != nil || id2 != id || !bytes.Equal(msg2, msg) {
			t.Fatalf("%x: re-encoded, reads %x %x %v", b, id2, msg2, err)
		}
	})
}

// FuzzGSSAPISteps gives a client that has sent its AP-REQ two tokens of a hostile
// server's: they reach gokrb5's ASN.1 and crypto decoders too.
func FuzzGSSAPISteps(f *testing.F) {
	key := types.EncryptionKey{KeyType: etypeID.AES256_CTS_HMAC_SHA1_96, KeyValue: bytes.Repeat([]byte{7}, 32)}
	f.Fuzz(func(t *testing.T, first, second []byte) {
		c := &gssClient{sessionKey: key}
		if _, _, err := c.Step(first); err != nil {
			return
		}
		_, _, _ = c.Step(second)
	})
}
