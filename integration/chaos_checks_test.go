package integration

import (
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/shared"
)

// The chaos run's checks must be able to fail: each is fed a record that breaks it,
// and one that does not.
func TestChaosChecksCatchViolations(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	a, b := &chaosClient{name: "a", timeout: 2 * time.Second}, &chaosClient{name: "b", timeout: 2 * time.Second}
	mk := func(c *chaosClient, kind string, from, to int, token int64, live bool) *hold {
		return &hold{client: c, kind: kind, start: at(from), end: at(to), token: token, live: live}
	}

	t.Run("overlaps", func(t *testing.T) {
		apart := []*hold{mk(a, "lock", 0, 10, 1, true), mk(b, "lock", 10, 20, 2, true)}
		require.Empty(t, overlaps(apart, atMost(1)), "touching holds do not overlap")
		stale := []*hold{mk(a, "lock", 0, 15, 1, false), mk(b, "lock", 10, 20, 2, true)}
		require.Empty(t, overlaps(stale, atMost(1)), "a holder whose session died is not held to exclusion")
		both := []*hold{mk(a, "lock", 0, 15, 1, true), mk(b, "lock", 10, 20, 2, true)}
		require.Len(t, overlaps(both, atMost(1)), 1)

		readers := []*hold{mk(a, "read", 0, 15, 1, true), mk(b, "read", 10, 20, 2, true)}
		require.Empty(t, overlaps(readers, writerAlone))
		writer := []*hold{mk(a, "read", 0, 15, 1, true), mk(b, "write", 10, 20, 2, true)}
		require.Len(t, overlaps(writer, writerAlone), 1)

		instant := mk(a, "lock", 5, 5, 1, true)
		require.Empty(t, overlaps([]*hold{instant, mk(b, "lock", 5, 9, 2, true)}, atMost(1)), "a hold of no length ends")

		three := []*hold{mk(a, "lease", 0, 30, 1, true), mk(b, "lease", 5, 30, 2, true), mk(a, "lease", 10, 30, 3, true)}
		require.Empty(t, overlaps(three, atMost(3)))
		require.Len(t, overlaps(three, atMost(2)), 1)
	})

	t.Run("tokens", func(t *testing.T) {
		all := func(*hold) bool { return true }
		require.Empty(t, tokensIncrease([]*hold{mk(a, "lock", 0, 10, 1, true), mk(b, "lock", 10, 20, 2, true)}, all))
		require.Len(t, tokensIncrease([]*hold{mk(a, "lock", 0, 10, 2, true), mk(b, "lock", 10, 20, 2, true)}, all), 1)
	})

	t.Run("register", func(t *testing.T) {
		var r fencedRegister
		first, second, stale := mk(a, "lock", 0, 10, 5, true), mk(b, "lock", 10, 20, 7, true), mk(a, "lock", 0, 30, 5, false)
		require.True(t, r.write(first))
		require.True(t, r.write(first))
		require.True(t, r.write(second))
		require.False(t, r.write(stale), "a lower token is refused")
		require.Equal(t, 1, stale.refused)
		require.Empty(t, r.violations)
		require.True(t, r.write(mk(a, "lock", 20, 30, 7, true)))
		require.Len(t, r.violations, 1, "one token, two holders")
	})

	t.Run("losses", func(t *testing.T) {
		silenced := []blackhole{{client: a, from: at(1000)}}
		told := mk(a, "lock", 0, 3000, 1, false)
		told.lostAt = at(2900)
		require.Empty(t, lossesUntold([]*hold{told}, silenced, nil, nil))
		untold := mk(a, "lock", 0, 4500, 1, false)
		require.Len(t, lossesUntold([]*hold{untold}, silenced, nil, nil), 1, "believed 3.5 s after a black-hole")
		other := mk(b, "lock", 0, 4500, 1, true)
		require.Empty(t, lossesUntold([]*hold{other}, silenced, nil, nil), "another client's silence")
		other.session = 7
		lost := map[*chaosClient][]sessionLost{b: {{at(1000), 7}}}
		require.Len(t, lossesUntold([]*hold{other}, nil, lost, nil), 1, "believed past its client's Lost")
		lost = map[*chaosClient][]sessionLost{b: {{at(1000), 6}}}
		require.Empty(t, lossesUntold([]*hold{other}, nil, lost, nil), "another session's Lost")

		// With the client's states, the violation says what it heard around the loss
		// and when the holder was told, and nothing from long before.
		lost = map[*chaosClient][]sessionLost{b: {{at(3000), 7}}}
		late := mk(b, "item", 0, 4500, 1, false)
		late.session, late.lostAt, late.signalled = 7, at(4500), at(4400)
		heard := map[*chaosClient][]stateChange{b: {
			{at(-5000), framework.Connected, 7},
			{at(1000), framework.Suspended, 7},
			{at(3000), framework.Lost, 7},
			{at(3200), framework.Reconnected, 8},
		}}
		ps := lossesUntold([]*hold{late}, nil, lost, heard)
		require.Len(t, ps, 1)
		stamp := func(ms int) string { return at(ms).Format("15:04:05.000") }
		require.Contains(t, ps[0], "its client heard: "+stamp(1000)+" Suspended (session 0x7), "+stamp(3000)+" Lost (session 0x7), "+
			stamp(3200)+" Reconnected (session 0x8), its signal closed at "+stamp(4400)+", it stopped at "+stamp(4500))
		require.NotContains(t, ps[0], "Connected (session")
		quiet := map[*chaosClient][]stateChange{b: {}}
		require.Contains(t, lossesUntold([]*hold{late}, nil, lost, quiet)[0], "its client heard: nothing from "+stamp(-1000)+" to "+stamp(5500))
	})
}

// The counter's history check fails a double add, a success that never applied and
// a read of a value the counter never held, and passes an unknown outcome either way.
func TestChaosCounterCheckCatchesViolations(t *testing.T) {
	add := func(client int, delta, pre int64, call, ret int64) porcupine.Operation {
		return porcupine.Operation{ClientId: client, Input: addInput{delta}, Call: call, Output: addOutput{pre: pre, post: pre + delta}, Return: ret}
	}
	unknown := func(client int, delta int64, call int64) porcupine.Operation {
		return porcupine.Operation{ClientId: client, Input: addInput{delta}, Call: call, Output: addOutput{unknown: true}, Return: math.MaxInt64}
	}
	get := func(client int, v int64, call, ret int64) porcupine.Operation {
		return porcupine.Operation{ClientId: client, Input: getInput{}, Call: call, Output: v, Return: ret}
	}
	check := func(h ...porcupine.Operation) bool { return porcupine.CheckOperations(counterModel, h) }

	require.True(t, check(add(0, 5, 0, 0, 10), add(1, 3, 5, 11, 20), get(0, 8, 21, 30)))
	require.False(t, check(add(0, 5, 0, 0, 10), add(1, 3, 5, 11, 20), get(0, 13, 21, 30)), "an add counted twice")
	require.False(t, check(add(0, 5, 0, 0, 10), add(1, 3, 5, 11, 20), get(0, 5, 21, 30)), "a success that never applied")
	require.True(t, check(add(0, 5, 0, 0, 10), unknown(1, 3, 11), get(0, 8, 21, 30)), "an unknown add that applied")
	require.True(t, check(add(0, 5, 0, 0, 10), unknown(1, 3, 11), get(0, 5, 21, 30)), "an unknown add that did not")
	require.False(t, check(add(0, 5, 0, 0, 10), unknown(1, 3, 11), get(0, 6, 21, 30)))
	require.False(t, check(add(0, 5, 0, 0, 10), get(1, 0, 11, 20)), "a read older than a finished add")

	cas := func(expect, v int64, swapped bool, call, ret int64) porcupine.Operation {
		return porcupine.Operation{Input: casInput{expect, v}, Call: call, Output: casOutput{swapped: swapped}, Return: ret}
	}
	require.True(t, check(add(0, 5, 0, 0, 10), cas(5, 9, true, 11, 20), get(0, 9, 21, 30)))
	require.False(t, check(add(0, 5, 0, 0, 10), cas(5, 9, false, 11, 20)), "refused while it held the value expected")
	require.False(t, check(add(0, 5, 0, 0, 10), cas(4, 9, true, 11, 20)), "swapped what it did not hold")

	// A read is placed after its session's last acknowledged write, not after the
	// client's previous call: ZooKeeper lets a session read from a server that lags
	// behind writes other clients have finished, as long as it has seen the
	// session's own. Client 0 adds 5; client 1 adds 3 and is answered; client 0's
	// next add fails (timed out) and its read, from a server that has not yet applied
	// client 1's add, says 5. Legal, and failed when the read was placed at the failed
	// add's call. A double add is still caught.
	var bound readBound
	bound.place(1, func(int64) bool { return false })
	bound.wrote(1, 0)
	failed := porcupine.Operation{ClientId: 0, Input: addInput{7}, Call: 21, Output: addOutput{failed: true}, Return: 30}
	stale := get(0, 5, bound.place(1, func(int64) bool { return false }), 40)
	calls := []counterCall{{op: add(0, 5, 0, 0, 10)}, {op: add(1, 3, 5, 11, 20)}, {op: failed}, {op: stale, strict: 21}}
	require.True(t, check(counterOps(calls, false)...), "a read from a server behind another client's finished add")
	require.False(t, check(counterOps(calls, true)...), "the placement after the previous call fails it")
	calls[3].op.Output, calls[3].strict = int64(13), 0
	require.False(t, check(counterOps(calls, false)...), "an add counted twice")
	require.Equal(t, int64(0), bound.place(2, func(int64) bool { return false }), "a new session reads anywhere before its return")
	bound.wrote(2, 50)
	require.Equal(t, int64(50), bound.place(2, func(int64) bool { return false }))
	require.Equal(t, int64(0), bound.place(2, func(d int64) bool { return d == 50 }), "Lost after its last write")

	// A failing history is written out: every call with its times, client, session
	// and error, and porcupine's view of it.
	t0 := time.Date(2026, 11, 26, 7, 0, 0, 0, time.UTC)
	calls[2].session, calls[2].err = 0x1a, "counter: add 7 to /c: context deadline exceeded"
	calls = append(calls, counterCall{op: unknown(1, 2, 45)})
	files, err := writeCounterHistory(t.TempDir(), "counter-3", "/chaos/counter-3", calls, counterOps(calls, false), t0)
	require.NoError(t, err)
	require.Len(t, files, 2)
	text, err := os.ReadFile(files[0])
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(text)), "\n")
	require.Len(t, lines, 2+5)
	require.Equal(t, "2026-11-26T07:00:00.000000Z\t2026-11-26T07:00:00.000000Z\t0\t0x0\t{delta:5}\t{pre:0 post:5 failed:false unknown:false}\t-\t", lines[2], "the first call")
	require.Contains(t, string(text), "\t0\t0x1a\t{delta:7}\t{pre:0 post:0 failed:true unknown:false}\t-\tcounter: add 7 to /c: context deadline exceeded\n")
	require.Contains(t, lines[6], "open", "an unknown outcome's open end")
	html, err := os.ReadFile(files[1])
	require.NoError(t, err)
	require.Contains(t, string(html), "<html")
}

// The shared count's check fails a follower that ended elsewhere, a listener that
// missed the last value, and versions that went back: a server loss when every
// follower heard them go back, the recipe's failure when not.
func TestChaosSharedCheckCatchesViolations(t *testing.T) {
	t0 := time.Now()
	v := func(value, version int32) shared.Versioned[int32] {
		return shared.Versioned[int32]{Value: value, Version: version}
	}
	h := func(s int, vs ...shared.Versioned[int32]) []heardValue {
		var hs []heardValue
		for k, x := range vs {
			hs = append(hs, heardValue{x, t0.Add(time.Duration(s+k) * time.Second)})
		}
		return hs
	}
	final := v(7, 3)
	require.Empty(t, followerProblems("a", final, h(0, v(1, 0), v(5, 2), final), final))
	require.Len(t, followerProblems("a", v(5, 2), h(0, v(1, 0), v(5, 2)), final), 1, "ended elsewhere")
	require.Len(t, followerProblems("a", final, h(0, v(1, 0), v(5, 2)), final), 1, "missed the last")

	names := []string{"a", "b", "c"}
	growing := h(0, v(1, 0), v(5, 2), final)
	losses, problems := wentBack("/n", names, [][]heardValue{growing, growing, growing})
	require.Empty(t, losses)
	require.Empty(t, problems)
	back := h(0, v(5, 2), v(1, 1), final)
	losses, problems = wentBack("/n", names, [][]heardValue{back, back, h(3, v(5, 2), v(1, 1))})
	require.Len(t, losses, 1, "every follower heard the version go back")
	require.Empty(t, problems)
	require.Equal(t, t0, losses[0].from)
	require.Equal(t, t0.Add(4*time.Second), losses[0].to)
	losses, problems = wentBack("/n", names, [][]heardValue{back, growing, growing})
	require.Empty(t, losses)
	require.Len(t, problems, 1, "one follower alone heard it go back: the recipe's failure")
	losses, problems = wentBack("/n", names, [][]heardValue{back, back, h(100, v(5, 2), v(1, 1))})
	require.Empty(t, losses, "heard far apart, they are not one loss")
	require.Len(t, problems, 3)
}

// The witness's check finds an acknowledged history the servers went back on, once,
// and passes concurrent writes in any order.
func TestChaosWitnessCheckFindsLostWrites(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	w := func(call, ack int, zxid int64, version int32) ackedWrite {
		return ackedWrite{client: "w", call: at(call), at: at(ack), zxid: zxid, version: version}
	}
	clean := []ackedWrite{w(0, 10, 0x101, 1), w(5, 12, 0x102, 2), w(11, 20, 0x103, 3), w(21, 30, 0x104, 4)}
	require.Empty(t, lostAcks("/w", clean), "two writes in flight at once may be acknowledged in either order")

	lost := append(clean, w(31, 40, 0x200000001, 3), w(41, 50, 0x200000002, 4), w(51, 60, 0x200000003, 5))
	losses := lostAcks("/w", lost)
	require.Len(t, losses, 1, "one loss, reported at the first write on the older history")
	require.Contains(t, losses[0].evidence, "version 3 (zxid 0x200000001")
	require.Contains(t, losses[0].evidence, "after version 4 (zxid 0x104")
	require.Contains(t, losses[0].evidence, "2 acknowledged writes gone")
	require.Equal(t, at(30), losses[0].from)
	require.Equal(t, at(40), losses[0].to)

	older := append(clean, w(31, 40, 0x100, 5))
	require.Len(t, lostAcks("/w", older), 1, "a lower zxid after an acknowledged write")
}

// The verdict: a server's data loss, and a counter history that only it explains, fail
// a run on a server not known to lose writes (3.9.6, the default) and are listed,
// with the upstream issue that explains them, without failing one on 3.8.0 or 3.9.3;
// the recipes' failures, exclusivity and fencing first, fail it on any server, loss
// or no loss.
func TestChaosVerdictNeverExcusesTheRecipes(t *testing.T) {
	t0 := time.Now()
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	a, b := &chaosClient{name: "a"}, &chaosClient{name: "b"}
	loss := serverLoss{node: "/chaos/witness", from: at(10), to: at(12), evidence: "version 3 after 4"}
	inLoss, apart := span{"/chaos/counter-0", at(0), at(20)}, span{"/chaos/counter-5", at(100), at(120)}
	require.True(t, inLoss.explainedBy([]serverLoss{loss}))
	require.False(t, apart.explainedBy([]serverLoss{loss}))

	cw := &counterWorkload{illegal: []span{inLoss, apart}}
	counted, explained := cw.problems([]serverLoss{loss})
	require.Len(t, counted, 1, "a history no loss explains is the counter's failure")
	require.Contains(t, counted[0], "counter-5")
	require.Len(t, explained, 1)

	onlyLoss := findings{losses: []serverLoss{loss}, explained: explained, known: lossyServers["3.9.6"]}
	require.Equal(t, 2, onlyLoss.violations(), "on a server not known to lose writes (3.9.6), a loss fails the run")
	require.Contains(t, onlyLoss.report("3.9.6"), "is not known to lose writes")
	for version, issue := range map[string]string{"3.8.0": "ZOOKEEPER-4643", "3.9.3": "ZOOKEEPER-4925"} {
		onlyLoss.known = lossyServers[version]
		require.Zero(t, onlyLoss.violations(), "on %s a loss alone is listed, not counted", version)
		report := onlyLoss.report(version)
		require.Contains(t, report, "SERVER DATA LOSS")
		require.Contains(t, report, "version 3 after 4")
		require.Contains(t, report, "ZooKeeper "+version+" is known to lose acknowledged writes ("+issue)
	}

	overlap := overlaps([]*hold{{client: a, kind: "lock", start: at(0), end: at(15), token: 1, live: true},
		{client: b, kind: "lock", start: at(11), end: at(20), token: 2, live: true}}, atMost(1))
	require.Len(t, overlap, 1)
	fenced := tokensIncrease([]*hold{{client: a, kind: "lock", start: at(0), end: at(5), token: 7, live: true},
		{client: b, kind: "lock", start: at(13), end: at(20), token: 3, live: true}}, func(*hold) bool { return true })
	require.Len(t, fenced, 1)
	withLoss := findings{failures: append(overlap, fenced...), losses: []serverLoss{loss}, known: lossyServers["3.8.0"]}
	require.Equal(t, 2, withLoss.violations(), "two holders at once and a token going back fail the run beside a loss, even on 3.8.0")
	withLoss.known = ""
	require.Equal(t, 3, withLoss.violations())
}
