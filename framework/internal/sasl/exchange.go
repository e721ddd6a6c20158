package sasl

import (
	"context"
	"errors"
	"fmt"
)

// Mechanism is the client's side of one SASL exchange, with one server on one
// connection: a value is used once. The exchange is driven by Exchange.
type Mechanism interface {
	// Name is the mechanism's SASL name: "DIGEST-MD5", "GSSAPI".
	Name() string
	// Start returns the client's first token; empty for a mechanism whose server speaks
	// first (DIGEST-MD5), which is still sent, as ZooKeeper's server expects.
	Start() ([]byte, error)
	// Step answers the server's token. done means the client's side is complete: a
	// non-nil response is then the last token, which the server answers with an empty
	// one; a nil response means there is nothing more to send.
	Step(challenge []byte) (response []byte, done bool, err error)
}

var (
	// ErrRefused is the error of an exchange that the server ended: wrong credentials,
	// a user or principal it does not know, or a mechanism it does not run (a server
	// of ZooKeeper's runs one, Kerberos or DIGEST-MD5, and answers every refusal alike:
	// error -124 and a closed connection; its log says which).
	ErrRefused = errors.New("sasl: the server refused the SASL login")
	// ErrNoSASL is the error of a server that answers the first token with none: a
	// server of ZooKeeper's without a SASL login (no JAAS Server section) does.
	ErrNoSASL = errors.New("sasl: the server answered with no token: it runs no SASL (no JAAS Server section)")
	// ErrTokenTooLarge is the error of a server's token over MaxTokenSize.
	ErrTokenTooLarge = errors.New("sasl: server's token too large")
	// ErrProtocol is the error of a server that does not follow the mechanism: a token
	// after the exchange is complete, or an exchange that does not end.
	ErrProtocol = errors.New("sasl: server broke the exchange's protocol")
)

// maxRounds bounds an exchange: DIGEST-MD5 takes two round trips, GSSAPI three.
const maxRounds = 8

// Send carries a token to the server in a sasl request and returns the token of the
// server's reply (nil for none). An error code in the reply's header is an error that
// wraps ErrRefused. It must return when ctx is done.
type Send func(ctx context.Context, token []byte) ([]byte, error)

// Exchange runs mech's exchange to its end: it sends mech's first token, answers each
// of the server's tokens until mech is done, and checks that the server has nothing
// more to say. A connection carries it first, before any other request, in sasl
// requests (OpSASL). Its errors name the mechanism and the step; ctx's end stops it
// between round trips and, through send, within one.
func Exchange(ctx context.Context, mech Mechanism, send Send) error {
	fail := func(round int, err error) error {
		return fmt.Errorf("sasl: %s, round trip %d: %w", mech.Name(), round, err)
	}
	token, err := mech.Start()
	if err != nil {
		return fmt.Errorf("sasl: %s: %w", mech.Name(), err)
	}
	last := false // token is the client's last, whose answer must be empty
	for round := 1; round <= maxRounds; round++ {
		if err := ctx.Err(); err != nil {
			return fail(round, err)
		}
		challenge, err := send(ctx, token)
		if err != nil {
			return fail(round, err)
		}
		if len(challenge) > MaxTokenSize {
			return fail(round, fmt.Errorf("%w: %d bytes", ErrTokenTooLarge, len(challenge)))
		}
		if last {
			if len(challenge) != 0 {
				return fail(round, fmt.Errorf("%w: a %d-byte token after the exchange completed", ErrProtocol, len(challenge)))
			}
			return nil
		}
		response, done, err := mech.Step(challenge)
		if err != nil {
			return fail(round, err)
		}
		if done && response == nil {
			return nil
		}
		token, last = response, done
		if token == nil {
			token = []byte{}
		}
	}
	return fail(maxRounds, fmt.Errorf("%w: no end after %d round trips", ErrProtocol, maxRounds))
}
