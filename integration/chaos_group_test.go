package integration

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/zkrecipes/zkrecipes/recipes/group"
)

// groupWatch is a group of members, one per client, under the faults: each member's
// node is kept in place and each member's view follows the group, so once the faults
// stop every view must name every member, with its payload, and nothing else.
type groupWatch struct {
	members []*group.Member
	changes int           // views heard by the members' listeners
	settled time.Duration // from the end of the faults until every view was seen exact
	problem string
	stops   []func()
	heard   chan struct{}
}

const groupPath = "/chaos/group"

func newGroupWatch(ctx context.Context, clients []*chaosClient) (*groupWatch, error) {
	gw := &groupWatch{heard: make(chan struct{}, 1<<16)}
	for _, cc := range clients {
		m, err := group.New(cc.c, groupPath, cc.name, []byte("payload of "+cc.name))
		if err == nil {
			gw.stops = append(gw.stops, m.Listen(func(map[string][]byte) { gw.heard <- struct{}{} }))
			err = m.Start(ctx)
		}
		if err != nil {
			gw.close(ctx)
			return nil, err
		}
		gw.members = append(gw.members, m)
	}
	return gw, nil
}

// exact reports whether every member sees exactly the group.
func (gw *groupWatch) exact() bool {
	want := map[string]string{}
	for _, m := range gw.members {
		want[m.ID()] = "payload of " + m.ID()
	}
	for _, m := range gw.members {
		seen := map[string]string{}
		for id, p := range m.Members() {
			seen[id] = string(p)
		}
		if !maps.Equal(seen, want) {
			return false
		}
	}
	return true
}

// settle waits, once the faults have stopped (at stopped), until every view is exact.
func (gw *groupWatch) settle(ctx context.Context, stopped time.Time) {
	gw.settled, gw.problem = settleAfter(ctx, stopped, 20*time.Millisecond, func() string {
		if gw.exact() {
			return ""
		}
		var views []string
		for _, m := range gw.members {
			views = append(views, fmt.Sprintf("%s sees %v", m.ID(), slices.Sorted(maps.Keys(m.Members()))))
		}
		return fmt.Sprintf("views not exact %v after the faults stopped: %v", wait, views)
	})
}

func (gw *groupWatch) close(ctx context.Context) {
	for _, stop := range gw.stops {
		stop()
	}
	closeAll(ctx, gw.members)
	gw.changes = len(gw.heard)
}

func (gw *groupWatch) report() string {
	if gw.problem != "" {
		return "group: " + gw.problem + "\n"
	}
	return fmt.Sprintf("group: %d members; their listeners heard %d changes of the group; every view exact within %v of the faults stopping\n",
		len(gw.members), gw.changes, gw.settled.Round(time.Millisecond))
}
