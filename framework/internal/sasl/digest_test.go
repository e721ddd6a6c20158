package sasl

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// javaChallenge is what ZooKeeper 3.9.6's server sent (Java's DIGEST-MD5 server).
const javaChallenge = `realm="zk-sasl-md5",nonce="5sY3hKfVI94n0oYxmOua5FD6uo2rt9mWp1MPNYPw",charset=utf-8,algorithm=md5-sess`

// RFC 2831's example (section 4), which fixes the response and the server's proof.
func TestDigestMD5RFCExample(t *testing.T) {
	creds, err := NewDigestMD5("chris", "secret")
	require.NoError(t, err)
	c := &digestClient{creds: creds, uri: "imap/elwood.innosoft.com", cnonce: "OA6MHXh6VqTrRk"}
	resp, done, err := c.Step([]byte(`realm="elwood.innosoft.com",nonce="OA6MG9tEQGm2hh",qop="auth",algorithm=md5-sess,charset=utf-8`))
	require.NoError(t, err)
	require.False(t, done)
	require.Contains(t, string(resp), "response=d388dad90d4bbd760a152321f2143af7")
	require.Contains(t, string(resp), `digest-uri="imap/elwood.innosoft.com"`)
	resp, done, err = c.Step([]byte("rspauth=ea40f60335c427b5527b84dbabcdfffd"))
	require.NoError(t, err)
	require.True(t, done)
	require.Nil(t, resp)
}

func TestParseChallenge(t *testing.T) {
	ch, err := parseChallenge([]byte(javaChallenge))
	require.NoError(t, err)
	require.Equal(t, challenge{realm: "zk-sasl-md5", nonce: "5sY3hKfVI94n0oYxmOua5FD6uo2rt9mWp1MPNYPw", utf8: true}, ch)

	ch, err = parseChallenge([]byte(` , nonce = "a\"b\\c" ,, QOP="auth-int, auth",algorithm=md5-sess,cipher="rc4",stale=true`))
	require.NoError(t, err)
	require.Equal(t, challenge{nonce: `a"b\c`}, ch)

	for name, bad := range map[string]string{
		"no nonce":         `realm="r",algorithm=md5-sess`,
		"empty nonce":      `nonce="",algorithm=md5-sess`,
		"md5, not sess":    `nonce="n",algorithm=md5`,
		"no algorithm":     `nonce="n"`,
		"no auth qop":      `nonce="n",algorithm=md5-sess,qop="auth-conf"`,
		"latin-1":          `nonce="n",algorithm=md5-sess,charset=iso-8859-1`,
		"nonce twice":      `nonce="n",nonce="m",algorithm=md5-sess`,
		"two realms":       `realm="a",realm="b",nonce="n",algorithm=md5-sess`,
		"open quote":       `nonce="n,algorithm=md5-sess`,
		"escape at end":    `nonce="n\`,
		"no value":         `nonce`,
		"no name":          `="n"`,
		"junk after value": `nonce="n"x,algorithm=md5-sess`,
		"not UTF-8":        "nonce=\"\xff\",algorithm=md5-sess",
		"oversized":        `nonce="` + strings.Repeat("n", 2048) + `",algorithm=md5-sess`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := parseChallenge([]byte(bad))
			require.ErrorIs(t, err, ErrMalformedChallenge)
		})
	}
}

// server is a scripted SASL peer: its answers to the client's tokens, in order.
func server(answers ...string) Send {
	return func(ctx context.Context, token []byte) ([]byte, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(answers) == 0 {
			return nil, errors.New("the script has ended")
		}
		a := answers[0]
		answers = answers[1:]
		return []byte(a), nil
	}
}

func TestDigestMD5HostileServer(t *testing.T) {
	ctx := context.Background()
	creds, err := NewDigestMD5("alice", "secret")
	require.NoError(t, err)

	// The server's proof is checked.
	err = Exchange(ctx, creds.Mechanism(), server(javaChallenge, "rspauth=00000000000000000000000000000000"))
	require.ErrorIs(t, err, ErrServerNotVerified)
	// A nonce that an earlier exchange of the same credentials had is a replay.
	err = Exchange(ctx, creds.Mechanism(), server(javaChallenge))
	require.ErrorIs(t, err, ErrReplayedNonce)
	// A second challenge instead of the proof.
	err = Exchange(ctx, creds.Mechanism(), server(strings.Replace(javaChallenge, "5sY3", "6sY3", 1), javaChallenge))
	require.ErrorIs(t, err, ErrMalformedChallenge)
	// A challenge over RFC 2831's bound, and a token over any mechanism's.
	err = Exchange(ctx, creds.Mechanism(), server(`nonce="`+strings.Repeat("x", 4000)+`",algorithm=md5-sess`))
	require.ErrorIs(t, err, ErrTokenTooLarge)
	err = Exchange(ctx, creds.Mechanism(), server(strings.Repeat("x", MaxTokenSize+1)))
	require.ErrorIs(t, err, ErrTokenTooLarge)
	// An empty challenge: no SASL at all.
	err = Exchange(ctx, creds.Mechanism(), server(""))
	require.ErrorIs(t, err, ErrNoSASL)
	// A cancelled exchange stops.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	err = Exchange(cancelled, creds.Mechanism(), server(javaChallenge))
	require.ErrorIs(t, err, context.Canceled)
}

func TestNewDigestMD5Validates(t *testing.T) {
	for _, c := range [][2]string{{"", "p"}, {"u", ""}, {"u\x00", "p"}, {"u", "\xff"}} {
		_, err := NewDigestMD5(c[0], c[1])
		require.Error(t, err, "%q", c)
	}
}
