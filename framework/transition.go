package framework

import "github.com/go-zookeeper/zk"

// The client's state machine is Curator's, as a pure function: transition takes the
// session as last published and one event, and returns the new session and what
// to do about it. Client.handleEvent applies the actions; nothing here reads a
// clock, a connection or a lock, so every move is table-tested (transition_test.go).

// session is the state machine's state.
type session struct {
	gen         int             // the current handle's: older handles' events are ignored
	state       ConnectionState // the last state published
	id          int64           // the session of the last Connected or Reconnected
	suspendedAt int             // counts Suspended states, so a late timer of an old one is ignored
}

// eventKind says where a session event comes from.
type eventKind int

const (
	zkState       eventKind = iota // go-zookeeper's session event
	lostTimer                      // a Suspended session's timeout ran out
	authenticated                  // the credentials of a new session were sent, or failed
	refusedBehind                  // a server refused the session, having less history than the client saw
)

// sessionEvent is one input of the state machine, for the handle of generation gen.
type sessionEvent struct {
	gen   int
	kind  eventKind
	state zk.State // zkState: the state go-zookeeper reported
	epoch int      // lostTimer: the Suspended count the timer was set for
	sid   int64    // authenticated: the session the credentials were sent in, 0 if none
	ok    bool     // authenticated: the server took them (or there were none)
	// rebuilt: authenticated in a new session on an ensemble with less history than
	// the client has seen (rebuilt.go)
	rebuilt bool
}

// actions are what a transition asks of the client, in this order.
type actions struct {
	stopTimer    bool              // disarm the Lost timer
	publish      []ConnectionState // states for the listeners, in order
	lost         string            // why Lost was published (lostExpired, lostTimeout), if it was
	startTimer   bool              // arm Lost for the new Suspended state
	replace      bool              // give the session up: a new handle of generation gen
	authenticate bool              // send the credentials, then report as an authenticated event
	authFailed   bool              // the server refused the credentials
}

// transition is the next session after ev, and the actions that take the client
// there. A closing client and an old handle's events change nothing. A new session
// is published only once its credentials were accepted, so that no request runs
// without them; go-zookeeper has no timer of its own, so a session Suspended for a
// whole session timeout is given up here (Lost), or go-zookeeper would stay
// Connecting forever.
func transition(s session, closing bool, ev sessionEvent) (session, actions) {
	var do actions
	if closing || ev.gen != s.gen {
		return s, do
	}
	publish := func(states ...ConnectionState) {
		do.publish = append(do.publish, states...)
		s.state = states[len(states)-1]
	}
	switch {
	case ev.kind == lostTimer:
		if ev.epoch == s.suspendedAt && s.state == Suspended {
			publish(Lost)
			do.lost, do.replace = lostTimeout, true
			s.gen++
		}
	case ev.kind == refusedBehind:
		// The session cannot come back: the ensemble lost the history it was made in.
		if s.state == Suspended {
			do.stopTimer = true
			publish(Lost)
			do.lost, do.replace = lostRebuilt, true
			s.gen++
		}
	case ev.kind == authenticated:
		if !ev.ok || ev.sid == 0 {
			break // a failure drops the connection: its next session tries again
		}
		do.stopTimer = true
		if s.state == Latent {
			publish(Connected)
			s.id = ev.sid
			break
		}
		if ev.sid != s.id && s.state != Lost {
			publish(Lost)
			do.lost = lostExpired
		}
		if ev.rebuilt {
			publish(Rebuilt)
		}
		if !s.state.IsConnected() {
			publish(Reconnected)
		}
		s.id = ev.sid
	case ev.state == zk.StateHasSession:
		do.authenticate = true
	case ev.state == zk.StateDisconnected:
		if s.state.IsConnected() {
			publish(Suspended)
			do.startTimer = true
			s.suspendedAt++
		}
	case ev.state == zk.StateExpired:
		if s.state != Latent && s.state != Lost {
			do.stopTimer = true
			publish(Lost)
			do.lost = lostExpired
		}
	case ev.state == zk.StateConnectedReadOnly:
		if s.state != ReadOnly {
			publish(ReadOnly)
		}
	case ev.state == zk.StateAuthFailed:
		do.authFailed = true
	}
	return s, do
}
