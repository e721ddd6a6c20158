package framework

import "strconv"

// ConnectionState is Curator's view of a client's connection and session. Listeners
// hear every change, in order.
type ConnectionState int

const (
	// Latent is the state before the first session; listeners never hear it.
	Latent ConnectionState = iota
	// Connected: the first session of this client exists. Sent once per client.
	Connected
	// Suspended: the connection dropped while a session existed. The session may still
	// be alive on the server, or not: treat what it holds as uncertain.
	Suspended
	// Reconnected: a session is back after Suspended or Lost. After Lost it
	// is a new session, and every ephemeral node of the old one is gone.
	Reconnected
	// Lost: the session is gone, either expired by the server, or given up by this
	// client after staying Suspended for a whole session timeout. Ephemeral nodes,
	// locks and leadership held through it are lost.
	Lost
	// ReadOnly: connected to a server in read-only mode. go-zookeeper never asks for
	// read-only sessions, so this client does not enter it; it exists for parity with
	// Curator and for listeners written against its five states.
	ReadOnly
	// Rebuilt: the ensemble behind the client's addresses has less history than the
	// client has seen from it: it was replaced by a fresh one, or restored from an
	// older copy (a disaster recovery, a Kubernetes ZooKeeper without persistent
	// volumes, a development server started again). ZooKeeper's zxids, and with
	// them every node's czxid, start again from lower numbers: a fencing token (a
	// holder's node's czxid) issued from now on may be lower than one issued before,
	// and a store that refuses tokens lower than the highest it has seen must have
	// its fence reset, on purpose, now (see the example). The client learns it from
	// the zxid the servers answer with, which goes below the highest it had: it is
	// published when the first session on the rebuilt ensemble exists, after Lost
	// and before that session's Reconnected, and logged at Warn. A rebuilt ensemble
	// whose zxid has already grown past what the client saw cannot be told from the
	// old one this way, and goes unreported. The client is not connected in this
	// state. The error policies do not count it: Lost, just before it, lost every
	// hold of the old history.
	Rebuilt
)

var stateNames = [...]string{"Latent", "Connected", "Suspended", "Reconnected", "Lost", "ReadOnly", "Rebuilt"}

func (s ConnectionState) String() string {
	if s < 0 || int(s) >= len(stateNames) {
		return "ConnectionState(" + strconv.Itoa(int(s)) + ")"
	}
	return stateNames[s]
}

// IsConnected reports whether requests can be served in this state.
func (s ConnectionState) IsConnected() bool {
	return s == Connected || s == Reconnected || s == ReadOnly
}

// ErrorPolicy decides which connection states count as losing what a session holds:
// recipes give up locks and leadership on an error state.
type ErrorPolicy interface {
	IsError(ConnectionState) bool
}

type standardErrorPolicy struct{}

func (standardErrorPolicy) IsError(s ConnectionState) bool { return s == Suspended || s == Lost }

type sessionErrorPolicy struct{}

func (sessionErrorPolicy) IsError(s ConnectionState) bool { return s == Lost }

var (
	// StandardErrorPolicy, the default, treats Suspended and Lost as errors: a holder
	// gives up as soon as it cannot be sure its session is alive. This is the safe
	// choice: two holders are impossible while sessions behave.
	StandardErrorPolicy ErrorPolicy = standardErrorPolicy{}
	// SessionErrorPolicy treats only Lost as an error, so a short disconnection does
	// not interrupt a holder. The price: while Suspended, the server may already have
	// expired the session and granted the lock to another.
	SessionErrorPolicy ErrorPolicy = sessionErrorPolicy{}
)
