package framework

import (
	"fmt"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
)

// states are every state the machine can be in.
var states = []ConnectionState{Latent, Connected, Suspended, Reconnected, Lost, ReadOnly}

func pub(s ...ConnectionState) actions { return actions{publish: s} }

// TestTransition runs every event the state machine handles in every state: each
// row says what the event does in each state, and must say it for all of them.
func TestTransition(t *testing.T) {
	const gen, id, epoch = 3, 0x10, 2
	zkEv := func(s zk.State) sessionEvent { return sessionEvent{gen: gen, kind: zkState, state: s} }
	auth := func(sid int64, ok bool) sessionEvent {
		return sessionEvent{gen: gen, kind: authenticated, sid: sid, ok: ok}
	}
	nothing := map[ConnectionState]actions{}
	for _, s := range states {
		nothing[s] = actions{}
	}
	stopped := func(a actions) actions { a.stopTimer = true; return a }
	suspend := actions{publish: []ConnectionState{Suspended}, startTimer: true}
	expire := actions{stopTimer: true, publish: []ConnectionState{Lost}, lost: lostExpired}
	renew := actions{stopTimer: true, publish: []ConnectionState{Lost, Reconnected}, lost: lostExpired}
	rebuild := actions{stopTimer: true, publish: []ConnectionState{Lost, Rebuilt, Reconnected}, lost: lostExpired}
	rebuilt := auth(0x20, true)
	rebuilt.rebuilt = true

	tests := []struct {
		name    string
		ev      sessionEvent
		closing bool
		id      int64 // the session id after; 0: unchanged
		want    map[ConnectionState]actions
	}{
		{name: "a session: send the credentials first", ev: zkEv(zk.StateHasSession), want: map[ConnectionState]actions{
			Latent: {authenticate: true}, Connected: {authenticate: true}, Suspended: {authenticate: true},
			Reconnected: {authenticate: true}, Lost: {authenticate: true}, ReadOnly: {authenticate: true},
		}},
		{name: "credentials taken, same session", ev: auth(id, true), id: id, want: map[ConnectionState]actions{
			Latent: stopped(pub(Connected)), Connected: stopped(pub()), Suspended: stopped(pub(Reconnected)),
			Reconnected: stopped(pub()), Lost: stopped(pub(Reconnected)), ReadOnly: stopped(pub()),
		}},
		{name: "credentials taken, new session", ev: auth(0x20, true), id: 0x20, want: map[ConnectionState]actions{
			Latent: stopped(pub(Connected)), Connected: renew, Suspended: renew,
			Reconnected: renew, Lost: stopped(pub(Reconnected)), ReadOnly: renew,
		}},
		{name: "credentials taken, new session on a rebuilt ensemble", ev: rebuilt, id: 0x20, want: map[ConnectionState]actions{
			Latent: stopped(pub(Connected)), Connected: rebuild, Suspended: rebuild,
			Reconnected: rebuild, Lost: stopped(pub(Rebuilt, Reconnected)), ReadOnly: rebuild,
		}},
		{name: "credentials refused", ev: auth(id, false), want: nothing},
		{name: "session expired before the credentials", ev: auth(0, true), want: nothing},
		{name: "disconnected", ev: zkEv(zk.StateDisconnected), want: map[ConnectionState]actions{
			Latent: {}, Connected: suspend, Suspended: {}, Reconnected: suspend, Lost: {}, ReadOnly: suspend,
		}},
		{name: "expired", ev: zkEv(zk.StateExpired), want: map[ConnectionState]actions{
			Latent: {}, Connected: expire, Suspended: expire, Reconnected: expire, Lost: {}, ReadOnly: expire,
		}},
		{name: "read-only", ev: zkEv(zk.StateConnectedReadOnly), want: map[ConnectionState]actions{
			Latent: pub(ReadOnly), Connected: pub(ReadOnly), Suspended: pub(ReadOnly),
			Reconnected: pub(ReadOnly), Lost: pub(ReadOnly), ReadOnly: {},
		}},
		{name: "auth failed", ev: zkEv(zk.StateAuthFailed), want: map[ConnectionState]actions{
			Latent: {authFailed: true}, Connected: {authFailed: true}, Suspended: {authFailed: true},
			Reconnected: {authFailed: true}, Lost: {authFailed: true}, ReadOnly: {authFailed: true},
		}},
		{name: "connecting", ev: zkEv(zk.StateConnecting), want: nothing},
		{name: "connected, no session yet", ev: zkEv(zk.StateConnected), want: nothing},
		{name: "Lost timer of this Suspended", ev: sessionEvent{gen: gen, kind: lostTimer, epoch: epoch}, want: map[ConnectionState]actions{
			Latent: {}, Connected: {}, Reconnected: {}, Lost: {}, ReadOnly: {},
			Suspended: {publish: []ConnectionState{Lost}, lost: lostTimeout, replace: true},
		}},
		{name: "refused by a server with less history", ev: sessionEvent{gen: gen, kind: refusedBehind}, want: map[ConnectionState]actions{
			Latent: {}, Connected: {}, Reconnected: {}, Lost: {}, ReadOnly: {},
			Suspended: {stopTimer: true, publish: []ConnectionState{Lost}, lost: lostRebuilt, replace: true},
		}},
		{name: "an abandoned handle's refusal", ev: sessionEvent{gen: gen - 1, kind: refusedBehind}, want: nothing},
		{name: "Lost timer of an earlier Suspended", ev: sessionEvent{gen: gen, kind: lostTimer, epoch: epoch - 1}, want: nothing},
		{name: "an abandoned handle's session", ev: sessionEvent{gen: gen - 1, kind: zkState, state: zk.StateHasSession}, want: nothing},
		{name: "an abandoned handle's disconnection", ev: sessionEvent{gen: gen - 1, kind: zkState, state: zk.StateDisconnected}, want: nothing},
		{name: "an abandoned handle's credentials", ev: sessionEvent{gen: gen - 1, kind: authenticated, sid: 0x20, ok: true}, want: nothing},
		{name: "closing: disconnected", ev: zkEv(zk.StateDisconnected), closing: true, want: nothing},
		{name: "closing: expired", ev: zkEv(zk.StateExpired), closing: true, want: nothing},
		{name: "closing: credentials taken", ev: auth(0x20, true), closing: true, want: nothing},
		{name: "closing: Lost timer", ev: sessionEvent{gen: gen, kind: lostTimer, epoch: epoch}, closing: true, want: nothing},
	}
	for _, tt := range tests {
		require.Len(t, tt.want, len(states), "%s: a row must say what happens in every state", tt.name)
		for _, s := range states {
			t.Run(fmt.Sprintf("%s/%s", tt.name, s), func(t *testing.T) {
				before := session{gen: gen, state: s, id: id, suspendedAt: epoch}
				next, do := transition(before, tt.closing, tt.ev)
				require.Equal(t, tt.want[s], do)

				// The new session agrees with the actions.
				after := before
				if n := len(do.publish); n > 0 {
					after.state = do.publish[n-1]
				}
				if tt.id != 0 {
					after.id = tt.id
				}
				if do.startTimer {
					after.suspendedAt++
				}
				if do.replace {
					after.gen++
				}
				require.Equal(t, after, next)
			})
		}
	}
}
